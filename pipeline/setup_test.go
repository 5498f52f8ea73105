package pipeline_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// The set-up acceptance tests (issue 22, finding 1): a server that breaks
// or never finishes the set-up a session needs before its scheduled
// commands never reads as a knee. Each runs the whole pipeline in-process
// (embedded NATS, one local producer) against the embedded IMAP server with
// one knob set, and judges what report.json says and the exit code it calls
// for.

// setupRun runs rates against a server with opts, steps of window d and a
// warm-up of half a second, and returns the report.
func setupRun(t *testing.T, opts *embedded.IMAPOptions, d time.Duration, rates ...float64) messages.RunReport {
	t.Helper()
	srv, err := embedded.StartIMAP(opts)
	if err != nil {
		t.Fatalf("embedded.StartIMAP() error = %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	o := shortRun(t, srv, 1)
	o.OutDir = t.TempDir()
	o.Ramp.Template.Duration = messages.Duration(d)
	warmup := messages.Duration(500 * time.Millisecond)
	o.Ramp.Template.Warmup = &warmup
	o.Ramp.Plan.Rates = rates
	if _, err := runCtx(t, o); err != nil {
		t.Fatalf("Run() error = %v", err)
	}
	rep := readReport(t, o.OutDir)
	return *rep
}

// checkNotKnee fails unless rep has the run verdict want, a reason of code
// whose detail holds each of details, the exit code exit, no knee, and no
// finding that says the server slowed down.
func checkNotKnee(t *testing.T, rep messages.RunReport, want, code string, exit int, details ...string) {
	t.Helper()
	if rep.Verdict != want || rep.Knee != nil {
		t.Errorf("run verdict %q, knee %+v; want %q and no knee\n%s", rep.Verdict, rep.Knee, want, reportText(rep))
	}
	if got := verdict.ExitCode(rep); got != exit {
		t.Errorf("ExitCode() = %d, want %d", got, exit)
	}
	var detail string
	for _, r := range rep.Reasons {
		if r.Code == code {
			detail = r.Detail
		}
	}
	if detail == "" {
		t.Errorf("run reasons %+v, want one of code %s\n%s", rep.Reasons, code, reportText(rep))
	}
	for _, d := range details {
		if !strings.Contains(detail, d) {
			t.Errorf("reason %s detail = %q, want it to name %q", code, detail, d)
		}
	}
	for _, f := range rep.Findings {
		if strings.Contains(f, "slowing down") {
			t.Errorf("finding %q: the server served nothing, it did not slow down", f)
		}
	}
}

// reportText shows a report's verdicts for a failure message.
func reportText(rep messages.RunReport) string {
	var b strings.Builder
	b.WriteString("verdict " + rep.Verdict)
	for _, s := range rep.Steps {
		b.WriteString(fmt.Sprintf("\n  step %d %s (%.1f/s offered, %.1f/s delivered)", s.Step, s.Verdict, s.TargetRate, s.DeliveredRate))
		for name, ph := range s.Phases {
			b.WriteString(fmt.Sprintf("\n    %s: attempted %d, succeeded %d, dropped %d, p50 %.1f ms, p99 %.1f ms", name, ph.Attempted, ph.Succeeded, ph.Dropped, ph.P50, ph.P99))
		}
		for _, r := range s.Reasons {
			b.WriteString("\n    " + r.Code + ": " + r.Detail)
		}
	}
	return b.String()
}

func TestSetupEverySelectRefused(t *testing.T) {
	rep := setupRun(t, &embedded.IMAPOptions{RefuseSelect: 1}, 2*time.Second, 20)
	checkNotKnee(t, rep, messages.RunFailing, messages.ReasonFailing, verdict.ExitFailing, "select attempts failed", "most often select: imap: NO [SERVERBUG] injected fault")
}

func TestSetupNeverGreets(t *testing.T) {
	// Steps of 2 s, the dial timeout 10 s: every dial still waits at the end.
	rep := setupRun(t, &embedded.IMAPOptions{NoGreeting: true}, 2*time.Second, 20)
	checkNotKnee(t, rep, messages.RunInconclusive, messages.ReasonSetupUnanswered, verdict.ExitInconclusive, "no session got past the greeting", "not be speaking IMAP")
}

func TestSetupLoginSlowerThanStep(t *testing.T) {
	rep := setupRun(t, &embedded.IMAPOptions{LoginDelay: 8 * time.Second}, 2*time.Second, 20)
	checkNotKnee(t, rep, messages.RunInconclusive, messages.ReasonSetupUnanswered, verdict.ExitInconclusive, "no session got past the login", "authentication takes longer")
}

// TestSetupHalfSelectRefused: half the SELECTs answered NO — sessions
// that get in serve the rest, so neither the failing share of all the
// commands nor the served share fires; the step is failing all the same
// (a refused command, verdict.RefusedShare), naming select and its
// error, never a knee nor the start of a downward search.
func TestSetupHalfSelectRefused(t *testing.T) {
	rep := setupRun(t, &embedded.IMAPOptions{RefuseSelect: 0.5}, 2*time.Second, 20)
	checkNotKnee(t, rep, messages.RunFailing, messages.ReasonFailing, verdict.ExitFailing, "select attempts", "NO [SERVERBUG] injected fault")
	if len(rep.Steps) != 1 {
		t.Errorf("%d steps ran, want 1: a failing step ends the run\n%s", len(rep.Steps), reportText(rep))
	}
}

// TestSetupListRefused: every LIST answered NO, one command in seven of
// the mix: the step is failing, naming list, not a knee.
func TestSetupListRefused(t *testing.T) {
	rep := setupRun(t, &embedded.IMAPOptions{RefuseList: 1}, 2*time.Second, 40)
	checkNotKnee(t, rep, messages.RunFailing, messages.ReasonFailing, verdict.ExitFailing, "list attempts (100%", "NO [SERVERBUG] injected fault")
}
