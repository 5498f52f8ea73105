package verdict_test

import (
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

func TestLagCause(t *testing.T) {
	tests := []struct {
		name string
		h    messages.Health
		want string
	}{
		{name: "stopped", h: messages.Health{Stopped: true, CPU: 0.95, CPULimit: 1, Throttled: 0.3}, want: messages.ReasonGeneratorStalled},
		{name: "throttled", h: messages.Health{Throttled: 0.3, CPU: 0.95, CPULimit: 1}, want: messages.ReasonHostOverloaded},
		{name: "throttled at the bound", h: messages.Health{Throttled: 0.05, CPU: 0.01, CPULimit: 1}, want: messages.ReasonHostOverloaded},
		{name: "CPU-bound", h: messages.Health{CPU: 0.95, CPULimit: 1}, want: messages.ReasonGeneratorSaturated},
		{name: "CPU-bound at the bound", h: messages.Health{CPU: 3.2, CPULimit: 4}, want: messages.ReasonGeneratorSaturated},
		{name: "CPU-bound on a busy host", h: messages.Health{CPU: 0.95, CPULimit: 1, RunDelay: 0.4}, want: messages.ReasonGeneratorSaturated},
		{name: "waited for a CPU", h: messages.Health{CPU: 0.01, CPULimit: 1, RunDelay: 0.4}, want: messages.ReasonHostOverloaded},
		{name: "host CPU pressure", h: messages.Health{CPU: 0.01, CPULimit: 1, Pressure: 0.5}, want: messages.ReasonHostOverloaded},
		{name: "little pressure, little delay", h: messages.Health{CPU: 0.01, CPULimit: 1, Pressure: 0.05, RunDelay: 0.01}, want: messages.ReasonGeneratorStalled},
		{name: "idle and not waiting", h: messages.Health{CPU: 0.01, CPULimit: 1}, want: messages.ReasonGeneratorStalled},
		{name: "half of four cores", h: messages.Health{CPU: 2, CPULimit: 4}, want: messages.ReasonGeneratorStalled},
		{name: "no CPU limit (an old producer)", h: messages.Health{CPU: 0.01}, want: messages.ReasonGeneratorSaturated},
		{name: "no CPU limit, but waited", h: messages.Health{CPU: 0.01, RunDelay: 0.4}, want: messages.ReasonHostOverloaded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := verdict.LagCause(tt.h); got != tt.want {
				t.Errorf("LagCause(%+v) = %q, want %q", tt.h, got, tt.want)
			}
		})
	}
}

// The evidence of a lagging producer says what it reported, so the reader
// can check the cause.
func TestLagEvidence(t *testing.T) {
	tests := []struct {
		name string
		p    messages.ProducerBreakdown
		want []string
	}{
		{name: "saturated", p: messages.ProducerBreakdown{Producer: "p1", Saturated: true, LagCause: messages.ReasonGeneratorSaturated, LagP99: 120, CPU: 3.9, CPULimit: 4},
			want: []string{"p1 lag P99 120.0 ms", "3.90 of 4 cores"}},
		{name: "overloaded", p: messages.ProducerBreakdown{Producer: "p2", Saturated: true, LagCause: messages.ReasonHostOverloaded, LagP99: 80, CPU: 0.2, CPULimit: 1, RunDelay: 0.3, Pressure: 0.6, Throttled: 0.1},
			want: []string{"p2", "waited for a CPU 30%", "host CPU pressure 60%", "throttled 10%"}},
		{name: "stalled", p: messages.ProducerBreakdown{Producer: "p3", Saturated: true, LagCause: messages.ReasonGeneratorStalled, LagP99: 5000, Stopped: true},
			want: []string{"p3", "0.00 cores", "SIGSTOP"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := clean(1, 100, 1)
			s.GeneratorSaturated, s.PerProducer = true, []messages.ProducerBreakdown{tt.p}
			rs := verdict.Reasons(s)
			if len(rs) != 1 || rs[0].Code != tt.p.LagCause {
				t.Fatalf("Reasons(%s) = %v, want [%s]", tt.name, codes(rs), tt.p.LagCause)
			}
			for _, w := range tt.want {
				if !strings.Contains(rs[0].Detail, w) {
					t.Errorf("Reasons(%s) detail = %q, want it to contain %q", tt.name, rs[0].Detail, w)
				}
			}
		})
	}
}
