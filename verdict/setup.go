package verdict

import (
	"fmt"
	"time"

	"github.com/imapload/imapload/messages"
)

// ServedShare is the share of its scheduled commands a step's server must
// have delivered for the step to have measured it: under it, the server
// served (almost) nothing, and the step is failing or inconclusive, never
// below. A server that merely runs out of capacity still serves what it
// can: after a step that held at rate R, a ramp offers at most
// DefaultMaxJump·R, and a server that sustained R delivers at least
// 0.9/8 ≈ 11% of that. Serving under 10% is not a rate the server
// sustains but a server that did not let the sessions in (or a generator
// that sent nothing).
const ServedShare = 0.1

// Served reports whether r's server delivered at least ServedShare of the
// commands scheduled in its window; a step that scheduled none is served.
func Served(r messages.StepResult) bool {
	return r.Scheduled == 0 || float64(r.Succeeded) >= ServedShare*float64(r.Scheduled)
}

// unserved is why a step whose server served (almost) nothing did so: the
// first set-up stage (in session order) that most attempts did not pass. It
// returns a code (ReasonFailing when they failed, ReasonSetupUnanswered when
// they were still unanswered at the window's end, ReasonUnserved when no
// stage explains it) and the detail; "" for a served step.
func unserved(r messages.StepResult) (code, detail string) {
	if Served(r) {
		return "", ""
	}
	head := fmt.Sprintf("the server served %d of the %d scheduled commands (%.1f%%, under %.0f%%)",
		r.Succeeded, r.Scheduled, 100*float64(r.Succeeded)/float64(r.Scheduled), 100*ServedShare)
	st, ok := blockingStage(r.Setup)
	switch {
	case !ok && saturated(r):
		return "", "" // a slow server, its sessions all waiting on it: below judges it
	case !ok:
		return messages.ReasonUnserved, head + "; every session set-up passed: " + unservedCause(r)
	case st.Failed >= st.Waiting:
		d := fmt.Sprintf("%s: %d of %d %s", head, st.Failed, st.Started, stageWords(st.Stage, "failed"))
		if st.Error != "" {
			d += fmt.Sprintf(", most often %s: %s (%d)", stagePhase(st.Stage), st.Error, st.ErrorCount)
		}
		return messages.ReasonFailing, d
	}
	return messages.ReasonSetupUnanswered, fmt.Sprintf("no session got past the %s by the end of the %v window: %d of %d %s; %s",
		st.Stage, r.Duration.D().Round(time.Millisecond), st.Waiting, st.Started, stageWords(st.Stage, "still waiting"), stageHint(st.Stage))
}

// stagePhase is the phase (messages.Phase's name) a set-up stage is timed
// and its errors counted in: the connect, TLS and greeting are the dial.
func stagePhase(stage string) string {
	switch stage {
	case messages.SetupLogin, messages.SetupSelect:
		return stage
	}
	return "dial"
}

// stageWords says what attempts of stage did: "dials failed at the
// greeting", "login attempts failed".
func stageWords(stage, did string) string {
	if p := stagePhase(stage); p != stage {
		return fmt.Sprintf("dials %s at the %s", did, stage)
	}
	return fmt.Sprintf("%s attempts %s", stage, did)
}

// blockingStage is the first stage most of whose attempts did not pass
// (failed, or still unanswered).
func blockingStage(stages []messages.SetupStage) (messages.SetupStage, bool) {
	for _, s := range stages {
		if s.Started > 0 && s.Failed+s.Waiting > s.Done() {
			return s, true
		}
	}
	return messages.SetupStage{}, false
}

// saturated reports whether a step whose every set-up passed had its
// server serve some commands while the rest were never sent because every
// session was waiting on it: a server slowed down (worn by an overload,
// say), not one that served nothing, so the step is below, not unserved.
func saturated(r messages.StepResult) bool {
	_, sent := Failed(r)
	return r.Succeeded > 0 && r.Dropped > 0 && r.Dropped >= sent
}

// unservedCause says where the scheduled commands went when every set-up
// passed.
func unservedCause(r messages.StepResult) string {
	failed, sent := Failed(r)
	switch {
	case r.Dropped > 0 && r.Dropped >= sent:
		return fmt.Sprintf("%d were never sent (no session was free)", r.Dropped)
	case sent > 0:
		return fmt.Sprintf("%d of the %d sent failed", failed, sent)
	}
	return "none was sent"
}

// stageHint says what a set-up stage unanswered at the end of the window
// may mean.
func stageHint(stage string) string {
	switch stage {
	case messages.SetupConnect:
		return "the address may be filtered (packets dropped) or the server's listen queue full"
	case messages.SetupTLS:
		return "the server may not be speaking TLS on this port (plain IMAP, or STARTTLS: --starttls)"
	case messages.SetupGreeting:
		return "the server may not be speaking IMAP on this port, or TLS is needed (--tls)"
	case messages.SetupLogin:
		return "authentication takes longer than the step: a slow authentication backend, or a failed-login penalty (check the password)"
	case messages.SetupSelect:
		return "opening INBOX takes longer than the step (a very large or locked mailbox)"
	}
	return "the server did not answer"
}

// setupRemedy is what to do about a step whose set-ups went unanswered.
const setupRemedy = "check that the address and port speak IMAP as configured (--tls, --starttls) and that a session can log in and select INBOX with these accounts; if the server is only slow to let sessions in, give it longer steps (--step-duration) or a longer --warmup"

// unservedRemedy is what to do about a step the server served nothing of
// with every set-up passed.
const unservedRemedy = "look at the step's errors and the producers' logs: the commands were scheduled, the sessions set up, yet (almost) none was served"
