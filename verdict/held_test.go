package verdict_test

import (
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// connStep is a clean step at 100/s and ratio that offered conns held
// connections and held held of them, with failed of attempted set-ups.
func connStep(step int, ratio float64, conns int, held, failed, attempted uint64) messages.StepResult {
	s := clean(step, 100, ratio)
	s.Connections = &messages.ConnectionsResult{Target: conns, Offered: conns, Held: held, HeldAtEnd: held,
		SetupAttempted: attempted, SetupFailed: failed}
	return stamp(s)
}

func TestBelowConnections(t *testing.T) {
	tests := []struct {
		name        string
		step        messages.StepResult
		wantVerdict string
		wantBelow   []string // substrings of Below; nil means ""
	}{
		{name: "all held", step: connStep(1, 1, 2000, 2000, 0, 2000), wantVerdict: messages.VerdictHeld},
		{name: "a few short, under the threshold's slack", step: connStep(1, 1, 2000, 1900, 0, 2000), wantVerdict: messages.VerdictHeld},
		{name: "held short", step: connStep(1, 1, 2000, 1500, 0, 0), wantVerdict: messages.VerdictBelow,
			wantBelow: []string{"held connections: 1500 of 2000 held through the window (75.0%, under 90%)"}},
		{name: "new connections failing", step: connStep(1, 1, 2000, 2000, 30, 1000), wantVerdict: messages.VerdictBelow,
			wantBelow: []string{"new connections failing: 30 of 1000 hold set-ups failed"}},
		{name: "one failure in a thousand holds", step: connStep(1, 1, 2000, 2000, 1, 1000), wantVerdict: messages.VerdictHeld},
		{name: "rate and connections, both named", step: connStep(1, 0.5, 2000, 100, 0, 0), wantVerdict: messages.VerdictBelow,
			wantBelow: []string{"command rate: delivered 50.0 of 100.0/s", "; held connections: 100 of 2000"}},
		{name: "rate alone", step: below(1, 100), wantVerdict: messages.VerdictBelow, wantBelow: []string{"command rate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.step.Verdict != tt.wantVerdict {
				t.Errorf("Stamp() verdict = %q, want %q", tt.step.Verdict, tt.wantVerdict)
			}
			if tt.wantBelow == nil && tt.step.Below != "" {
				t.Errorf("Stamp() below = %q, want none", tt.step.Below)
			}
			for _, w := range tt.wantBelow {
				if !strings.Contains(tt.step.Below, w) {
					t.Errorf("Stamp() below = %q, want it to mention %q", tt.step.Below, w)
				}
			}
		})
	}
}

// TestConnectionRampKnee: a connection ramp keeps the rate; its knee is the
// first step, in ascending connections, below on either count, and the most
// held with the rate intact is the last step before it.
func TestConnectionRampKnee(t *testing.T) {
	steps := []messages.StepResult{
		connStep(3, 1, 4000, 3000, 0, 0), // held short: the knee
		connStep(1, 1, 1000, 1000, 0, 0),
		connStep(2, 1, 2000, 2000, 0, 0),
		connStep(4, 0.5, 8000, 8000, 0, 0), // rate fell: below, after the knee
	}
	knee, last, invalid := verdict.Knee(steps, 0)
	if knee == nil || knee.Step != 3 || knee.Connections != 4000 || !strings.Contains(knee.Below, "held connections") {
		t.Fatalf("Knee() = %+v, want step 3 at 4000 connections, below on held connections", knee)
	}
	if last == nil || last.Step != 2 || len(invalid) != 0 {
		t.Errorf("Knee() last held %+v, invalid %v; want step 2, none", last, invalid)
	}
	most := verdict.MostHeld(steps, 0)
	if most == nil || most.Step != 2 || most.Connections != 2000 || most.Target != 2000 {
		t.Errorf("MostHeld() = %+v, want step 2 with 2000 held", most)
	}
	if got := verdict.MostHeld([]messages.StepResult{held(1, 100)}, 0); got != nil {
		t.Errorf("MostHeld(a rate ramp) = %+v, want nil", got)
	}
}

// TestConnectionKneeNotFailing: at a server's connection limit its refusals
// of new connections (and of the sessions' logins) are load, not a server
// that does not answer correctly, since it holds thousands: below, not
// inconclusive.
func TestConnectionKneeNotFailing(t *testing.T) {
	s := clean(2, 100, 0)
	s.Phases = map[string]messages.PhaseResult{
		"dial": {Attempted: 59, Succeeded: 59}, "login": {Attempted: 59},
		"hold": {Attempted: 11894},
	}
	s.Errors = []messages.ErrorGroup{{Phase: "hold", Kind: "connection closed by the server", Count: 11894},
		{Phase: "login", Kind: "unexpected EOF", Count: 59}}
	s.Connections = &messages.ConnectionsResult{Target: 18000, Offered: 18000, Held: 16330, SetupAttempted: 11894, SetupFailed: 11894}
	s = stamp(s)
	if s.Verdict != messages.VerdictBelow || !strings.Contains(s.Below, "new connections failing") {
		t.Errorf("Stamp() = %q (reasons %v), below %q; want below on new connections failing", s.Verdict, s.Reasons, s.Below)
	}
	s.Connections.Held = 0 // nothing held: the server answers no one
	if s = stamp(s); s.Verdict != messages.VerdictInconclusive || !verdict.Has(s, messages.ReasonFailing) {
		t.Errorf("Stamp(nothing held) = %q %v, want inconclusive, failing", s.Verdict, s.Reasons)
	}
}
