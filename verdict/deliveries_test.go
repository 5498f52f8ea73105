package verdict_test

import (
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// deliverStep is a complete, valid step whose commands held, with
// deliveries accepted at ratio of 20/s and seen of watched arriving.
func deliverStep(ratio float64, watched, seen uint64) messages.StepResult {
	r := below(1, 100)
	r.DeliveredRate, r.Ratio = 100, 1
	r.Deliveries = &messages.DeliveriesResult{TargetRate: 20, OfferedRate: 20, DeliveredRate: 20 * ratio, Ratio: ratio,
		Scheduled: 600, Accepted: uint64(600 * ratio), Dropped: 600 - uint64(600*ratio),
		Arrivals: messages.Arrivals{Watched: watched, Seen: seen, Missing: watched - seen}}
	return r
}

func TestBelowDeliveries(t *testing.T) {
	tests := []struct {
		name        string
		step        messages.StepResult
		wantVerdict string
		wantBelow   []string // substrings of Below; nil means ""
	}{
		{name: "deliveries held", step: deliverStep(0.95, 100, 100), wantVerdict: messages.VerdictHeld},
		{name: "deliveries short", step: deliverStep(0.25, 100, 100), wantVerdict: messages.VerdictBelow,
			wantBelow: []string{"deliveries: accepted 5.0 of 20.0/s (25.0%, under 90%), 0 refused or failed, 450 never sent (no free delivery slot)"}},
		{name: "deliveries not arriving", step: deliverStep(1, 100, 50), wantVerdict: messages.VerdictBelow,
			wantBelow: []string{"time to inbox: 50 of 100 deliveries to accounts with a held IDLE connection seen there (50.0%, under 90%), 50 never seen"}},
		{name: "commands and deliveries, both named", step: func() messages.StepResult {
			r := deliverStep(0.5, 0, 0)
			r.DeliveredRate, r.Ratio = 50, 0.5
			return r
		}(), wantVerdict: messages.VerdictBelow, wantBelow: []string{"command rate: delivered 50.0 of 100.0/s", "; deliveries: accepted 10.0 of 20.0/s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			verdict.Stamp(&tt.step, verdict.DefaultThreshold)
			if tt.step.Verdict != tt.wantVerdict {
				t.Errorf("Stamp() verdict = %q (reasons %v), want %q", tt.step.Verdict, tt.step.Reasons, tt.wantVerdict)
			}
			if tt.wantBelow == nil && tt.step.Below != "" {
				t.Errorf("Stamp() Below = %q, want \"\"", tt.step.Below)
			}
			for _, w := range tt.wantBelow {
				if !strings.Contains(tt.step.Below, w) {
					t.Errorf("Stamp() Below = %q, want it to contain %q", tt.step.Below, w)
				}
			}
		})
	}
}
