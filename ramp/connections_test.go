package ramp

import (
	"slices"
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// runConns feeds Plan.NextStep with results of a server that holds up to
// limit connections at full rate, and returns the connections it chose and
// why it stopped.
func runConns(p Plan, limit int) ([]int, string) {
	var done []messages.StepResult
	var got []int
	for range 50 {
		rate, conns, stop := p.NextStep(done)
		if stop != "" {
			return got, stop
		}
		if rate != p.Rate {
			return got, "rate changed"
		}
		got = append(got, conns)
		r := messages.StepResult{Step: len(done) + 1, TargetRate: rate, Ratio: 1, OfferedRate: rate,
			Producers: []string{"p1"}, Complete: true,
			Connections: &messages.ConnectionsResult{Target: conns, Offered: conns, Held: uint64(min(conns, limit))}}
		verdict.Stamp(&r, 0.9)
		done = append(done, r)
	}
	return got, "did not stop"
}

func TestPlanConnections(t *testing.T) {
	tests := []struct {
		name     string
		plan     Plan
		limit    int
		want     []int
		wantStop string
	}{
		{name: "stops at the knee", plan: Plan{Rate: 200, Connections: []int{1000, 2000, 4000, 8000}},
			limit: 3000, want: []int{1000, 2000, 4000}, wantStop: "the knee was found"},
		{name: "one step past the knee", plan: Plan{Rate: 200, Connections: []int{1000, 2000, 4000, 8000}, AfterKnee: 1},
			limit: 1500, want: []int{1000, 2000, 4000}, wantStop: "the knee was found"},
		{name: "every step held", plan: Plan{Rate: 200, Connections: []int{1000, 2000}},
			limit: 1 << 20, want: []int{1000, 2000}, wantStop: "connections are done"},
		{name: "max steps", plan: Plan{Rate: 200, Connections: []int{1000, 2000, 3000}, MaxSteps: 2},
			limit: 1 << 20, want: []int{1000, 2000}, wantStop: "most steps allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.plan.Validate(); err != nil {
				t.Fatalf("Validate() error = %v", err)
			}
			got, stop := runConns(tt.plan, tt.limit)
			if !slices.Equal(got, tt.want) || !strings.Contains(stop, tt.wantStop) {
				t.Errorf("connections %v, stop %q; want %v, %q", got, stop, tt.want, tt.wantStop)
			}
		})
	}
}

func TestPlanConnectionsValidate(t *testing.T) {
	err := Plan{Connections: []int{2000, 1000, 0}, Rates: []float64{5}, Refine: 2}.Validate()
	for _, want := range []string{"connection ramp rate 0", "a connection ramp keeps one rate", "does not bisect",
		"connections 0: want 1..1000000", "want them rising"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() error = %v, want it to mention %q", err, want)
		}
	}
}
