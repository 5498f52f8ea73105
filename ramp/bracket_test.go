package ramp

import (
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
)

// decisions feeds Plan.Decide with results from o until it stops, and
// returns every decision, the stop last.
func decisions(p Plan, o outcome) []Decision {
	var done []messages.StepResult
	var out []Decision
	for range 50 {
		d := p.Decide(done)
		out = append(out, d)
		if d.Stop != "" {
			return out
		}
		q, why := o(d.Rate)
		done = append(done, result(len(done)+1, d.Rate, q, why))
	}
	return out
}

// TestDecideCooldown: a step that follows one below at a lower rate is
// cooled down for (the downward search, the re-offer, a midpoint after a
// midpoint below); a step above its predecessor, or after one that held,
// is not.
func TestDecideCooldown(t *testing.T) {
	type want struct {
		rate     float64
		kind     string
		cooldown bool
	}
	tests := []struct {
		name string
		plan Plan
		o    outcome
		want []want
	}{
		{"up, past the knee, re-offer, refine", Plan{Start: 100, AfterKnee: 1, Refine: 2}, capacity(300), []want{
			{100, KindRamp, false}, {200, KindRamp, false}, {400, KindRamp, false}, {800, KindRamp, false},
			{200, KindRecheck, true}, {300, KindRefine, false}, {350, KindRefine, false}}},
		{"down until one holds, then refine", Plan{Start: 100, Refine: 1}, capacity(30), []want{
			{100, KindRamp, false}, {50, KindDown, true}, {25, KindDown, true}, {37.5, KindRefine, false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decisions(tt.plan, tt.o)
			if len(got) != len(tt.want)+1 {
				t.Fatalf("Plan.Decide made %d decisions %+v, want %d steps and a stop", len(got), got, len(tt.want))
			}
			for i, w := range tt.want {
				if d := got[i]; d.Rate != w.rate || d.Kind != w.kind || d.Cooldown != w.cooldown {
					t.Errorf("Plan.Decide step %d = %+v, want rate %v kind %s cooldown %v", i+1, d, w.rate, w.kind, w.cooldown)
				}
			}
		})
	}
}

// TestDecideNoRecovery: a re-offer of the last held rate that falls below
// after the cool-down ends the run without bisecting, and says so.
func TestDecideNoRecovery(t *testing.T) {
	p := Plan{Start: 100, Refine: 3}
	done := []messages.StepResult{result(1, 100, 1, ""), result(2, 200, 1, ""), result(3, 400, 0.5, ""), result(4, 200, 0.6, "")}
	done[3].DeliveredRate = 120
	d := p.Decide(done)
	if d.Stop == "" || !strings.Contains(d.Stop, "did not recover after the overload: 200/s held before it") || !strings.Contains(d.Stop, "delivered 120/s") {
		t.Errorf("Plan.Decide = %+v, want a stop saying the server did not recover (200/s before, 120/s after)", d)
	}
}
