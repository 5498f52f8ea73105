package verdict_test

import (
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// unservedStep is a step of 3 s whose 97 scheduled commands the server
// served none of, set up as stages says.
func unservedStep(stages ...messages.SetupStage) messages.StepResult {
	return messages.StepResult{
		Kind: messages.KindStepResult, Run: "r1", Step: 1, TargetRate: 32, OfferedRate: 32,
		Duration: messages.Duration(3 * time.Second), Complete: true, Producers: []string{"p1"},
		Scheduled: 97, Dropped: 97, Setup: stages,
	}
}

// slowed is s with a few commands served and the rest never sent.
func slowed(s messages.StepResult) messages.StepResult {
	s.Succeeded, s.Dropped = 5, 92
	s.Phases = map[string]messages.PhaseResult{"fetch": {Count: 5, Attempted: 5, Succeeded: 5, Dropped: 92}}
	return s
}

// TestSlowedServerIsBelow: a server that served a few of the scheduled
// commands, the rest never sent because every session waited on it, with
// every set-up passed, slowed down (worn by an overload, say): the step is
// below, not unserved.
func TestSlowedServerIsBelow(t *testing.T) {
	s := slowed(unservedStep(messages.SetupStage{Stage: "connect", Started: 8}))
	s.DeliveredRate, s.Ratio = 5.0/3, 5.0/3/32
	verdict.Stamp(&s, 0)
	if s.Verdict != messages.VerdictBelow || len(s.Reasons) != 0 {
		t.Errorf("Stamp(): verdict %q, reasons %+v; want below with no reason", s.Verdict, s.Reasons)
	}
}

// TestUnserved: a step whose server served (almost) none of what was
// scheduled is failing when the set-up failed, setup_unanswered when it was
// still waiting, unserved otherwise: never below, never the knee.
func TestUnserved(t *testing.T) {
	refused := messages.SetupStage{Stage: "select", Started: 60, Failed: 60, Error: "NO [SERVERBUG] injected fault", ErrorCount: 60}
	tests := []struct {
		name   string
		step   messages.StepResult
		code   string
		detail []string
	}{
		{"every SELECT refused", unservedStep(
			messages.SetupStage{Stage: "connect", Started: 60}, messages.SetupStage{Stage: "greeting", Started: 60},
			messages.SetupStage{Stage: "login", Started: 60}, refused),
			messages.ReasonFailing, []string{"60 of 60 select attempts failed", "select: NO [SERVERBUG] injected fault (60)", "served 0 of the 97"}},
		{"never greeted", unservedStep(messages.SetupStage{Stage: "connect", Started: 8}, messages.SetupStage{Stage: "greeting", Started: 8, Waiting: 8}),
			messages.ReasonSetupUnanswered, []string{"no session got past the greeting by the end of the 3s window", "8 of 8 dials still waiting at the greeting", "not be speaking IMAP on this port"}},
		{"LOGIN slower than the step", unservedStep(messages.SetupStage{Stage: "connect", Started: 8}, messages.SetupStage{Stage: "greeting", Started: 8},
			messages.SetupStage{Stage: "login", Started: 8, Waiting: 8}),
			messages.ReasonSetupUnanswered, []string{"got past the login", "8 of 8 login attempts still waiting", "authentication takes longer than the step"}},
		{"set-ups passed, nothing served", unservedStep(messages.SetupStage{Stage: "connect", Started: 8}),
			messages.ReasonUnserved, []string{"every session set-up passed", "97 were never sent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.step
			verdict.Stamp(&s, 0)
			if s.Verdict != messages.VerdictInconclusive || len(s.Reasons) != 1 || s.Reasons[0].Code != tt.code {
				t.Fatalf("Stamp(): verdict %q, reasons %+v; want inconclusive with one reason %s", s.Verdict, s.Reasons, tt.code)
			}
			for _, want := range tt.detail {
				if !strings.Contains(s.Reasons[0].Detail, want) {
					t.Errorf("reason detail = %q, want it to contain %q", s.Reasons[0].Detail, want)
				}
			}
			if s.Reasons[0].Remedy == "" {
				t.Errorf("reason %s has no remedy", tt.code)
			}
			if k, _, _ := verdict.Knee([]messages.StepResult{s}, 0); k != nil {
				t.Errorf("Knee() = step %d, want none: the server served nothing", k.Step)
			}
		})
	}
}

// TestServed: 10% of the scheduled commands delivered is served; less is
// not; a step that scheduled nothing is.
func TestServed(t *testing.T) {
	for _, tt := range []struct {
		scheduled, succeeded uint64
		want                 bool
	}{{100, 10, true}, {100, 9, false}, {0, 0, true}, {1000, 0, false}} {
		r := messages.StepResult{Scheduled: tt.scheduled, Succeeded: tt.succeeded}
		if got := verdict.Served(r); got != tt.want {
			t.Errorf("Served(%d of %d) = %v, want %v", tt.succeeded, tt.scheduled, got, tt.want)
		}
	}
}
