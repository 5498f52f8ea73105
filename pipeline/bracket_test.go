package pipeline_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/ramp"
	"github.com/imapload/imapload/verdict"
)

// The bracket acceptance tests (issue 22, findings 2 and 3): a ramp whose
// first step is already past the server's capacity steps down until a rate
// holds, or says that none did down to --min; a ramp that bisects after an
// overload first re-offers the last rate that held, after a cool-down,
// and bisects only when that holds again. The server's capacity is the
// embedded server's gate (Workers/ServiceTime, timer waits rather than
// CPU), so what holds does not depend on the machine's speed.

// bracketRun runs plan against a server with opts, steps of 2 s after a
// warm-up of half a second, a cool-down of cooldown, sessions sessions
// (each pays its LOGIN and SELECT at the gate too), the mix (nil: the
// default), a producer that queues one command at most (so that a backlog
// is dropped, as a slow server's is, rather than served after the window
// and counted as delivered), and returns the
// report and the step results in the order they ran.
func bracketRun(t *testing.T, opts *embedded.IMAPOptions, plan ramp.Plan, cooldown time.Duration, sessions int, mix map[string]float64) (messages.RunReport, []messages.StepResult) {
	t.Helper()
	srv, err := embedded.StartIMAP(opts)
	if err != nil {
		t.Fatalf("embedded.StartIMAP() error = %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	o := shortRun(t, srv, 1)
	o.OutDir = t.TempDir()
	o.Ramp.Template.Duration = messages.Duration(2 * time.Second)
	warmup := messages.Duration(500 * time.Millisecond)
	o.Ramp.Template.Warmup = &warmup
	o.Ramp.Plan = plan
	o.Ramp.Cooldown = cooldown
	o.Producer.Sessions = sessions
	o.Producer.Queue = 1 // a backlog is dropped, not served after the window
	o.Ramp.Template.Mix = mix
	o.StepTimeout = 20 * time.Second // a worn server ends its sessions slowly
	results, err := runCtx(t, o)
	if err != nil {
		t.Fatalf("Run() error = %v", err)
	}
	rep := readReport(t, o.OutDir)
	return *rep, results
}

// offered lists the target rates of results in the order they ran.
func offered(results []messages.StepResult) []float64 {
	var out []float64
	for _, r := range results {
		out = append(out, r.TargetRate)
	}
	return out
}

// gate25 is a server of one worker and 40 ms a command: 25 commands/s.
func gate25() *embedded.IMAPOptions {
	return &embedded.IMAPOptions{Workers: 1, ServiceTime: 40 * time.Millisecond}
}

// TestBracketFromBelow: capacity 25/s and a first step of 60/s: the ramp
// steps down (30/s, below too; 15/s holds) and the report brackets the
// capacity (held at 15/s, below at 30/s) instead of "knee at step 1, last
// held: none"; exit 0.
func TestBracketFromBelow(t *testing.T) {
	rep, results := bracketRun(t, gate25(), ramp.Plan{Start: 60}, time.Second, 4, nil)
	if got := offered(results); !slices.Equal(got, []float64{60, 30, 15}) {
		t.Fatalf("offered rates %v, want [60 30 15]\n%s", got, reportText(rep))
	}
	if rep.Verdict != messages.RunKnee || rep.Knee == nil || rep.Knee.Rate != 30 || rep.LastHeld == nil || rep.LastHeld.Rate != 15 {
		t.Errorf("verdict %q, knee %+v, last held %+v; want the bracket held 15/s, below 30/s\n%s", rep.Verdict, rep.Knee, rep.LastHeld, reportText(rep))
	}
	if got := verdict.ExitCode(rep); got != verdict.ExitOK {
		t.Errorf("ExitCode() = %d, want %d", got, verdict.ExitOK)
	}
	for _, f := range rep.Findings {
		if strings.Contains(f, "start the ramp lower") {
			t.Errorf("finding %q: the ramp searched down itself", f)
		}
	}
}

// TestBracketNoneDownToMin: capacity 10/s, a first step of 20/s and a
// floor of 15/s: both fall below, so the run says no rate held down to
// the floor (none_held, exit 6), naming the lowest step, and has no knee.
func TestBracketNoneDownToMin(t *testing.T) {
	opts := &embedded.IMAPOptions{Workers: 1, ServiceTime: 100 * time.Millisecond}
	rep, results := bracketRun(t, opts, ramp.Plan{Start: 20, Min: 15}, time.Second, 4, nil)
	if got := offered(results); !slices.Equal(got, []float64{20, 15}) {
		t.Fatalf("offered rates %v, want [20 15]\n%s", got, reportText(rep))
	}
	checkNotKnee(t, rep, messages.RunNoneHeld, messages.ReasonNoneHeld, verdict.ExitNoneHeld, "no step held", "down to step 2 at 15/s offered")
	if rep.LastHeld != nil {
		t.Errorf("last held %+v, want none", rep.LastHeld)
	}
}

// wearing50 is a server of two workers and 40 ms a command (50/s) that a
// second at 45% of its capacity or more wears: it then serves the
// sessions' commands at an eighth of that (6.25/s) until lasts after the
// overload. (Two sessions offered 80/s keep it busy; 10/s is 20%.)
func wearing50(lasts time.Duration) *embedded.IMAPOptions {
	return &embedded.IMAPOptions{Workers: 2, ServiceTime: 40 * time.Millisecond,
		DegradeFor: lasts, DegradeAfter: time.Second, DegradeFactor: 8, DegradeShare: 0.45}
}

// listOnly is a mix of LIST alone: sessions that never log out keep the
// server busy with commands that wear it, none with set-ups that do not.
var listOnly = map[string]float64{"list": 1}

// findingWith is the first of rep's findings that holds s, "" if none.
func findingWith(rep messages.RunReport, s string) string {
	for _, f := range rep.Findings {
		if strings.Contains(f, s) {
			return f
		}
	}
	return ""
}

// TestRecoveryCheckRecovered: a server worn for half a second after an
// overload (80/s, two sessions keeping it busy) has recovered after a
// 3 s cool-down: the re-offer of the last held rate (10/s) holds again and
// the bisection runs (its midpoint, 45/s); the findings say the server
// recovered and which steps ran after the overload.
func TestRecoveryCheckRecovered(t *testing.T) {
	rep, results := bracketRun(t, wearing50(500*time.Millisecond), ramp.Plan{Rates: []float64{10, 80}, Refine: 1}, 3*time.Second, 2, listOnly)
	if got := offered(results); !slices.Equal(got, []float64{10, 80, 10, 45}) {
		t.Fatalf("offered rates %v, want [10 80 10 45]: the re-offer, then the midpoint\n%s", got, reportText(rep))
	}
	if f := findingWith(rep, "the server recovered after the overload of step 2"); f == "" || !strings.Contains(f, "step 3 re-offered 10.0/s and it held again") {
		t.Errorf("findings %q, want one saying the server recovered (step 3 re-offered 10/s)", rep.Findings)
	}
	if findingWith(rep, "steps 3, 4 ran after an overload (step 2 fell below first)") == "" {
		t.Errorf("findings %q, want one naming the steps run after the overload", rep.Findings)
	}
	if rep.Knee == nil || rep.LastHeld == nil || rep.LastHeld.Step == 3 {
		t.Errorf("knee %+v, last held %+v; want a knee, and the re-offer (step 3) never the last held", rep.Knee, rep.LastHeld)
	}
}

// TestRecoveryCheckNotRecovered: a server worn for 30 s after an overload
// has not recovered after a 1 s cool-down: the re-offer of 10/s falls
// below (the worn server serves 6.25/s), no midpoint is offered, and the
// run keeps the bracket measured before the overload (held 10/s, below
// 80/s), with a finding that says the server did not recover and both
// figures; exit 0.
func TestRecoveryCheckNotRecovered(t *testing.T) {
	rep, results := bracketRun(t, wearing50(30*time.Second), ramp.Plan{Rates: []float64{10, 80}, Refine: 3}, time.Second, 2, listOnly)
	if got := offered(results); !slices.Equal(got, []float64{10, 80, 10}) {
		t.Fatalf("offered rates %v, want [10 80 10]: the re-offer, then no midpoint\n%s", got, reportText(rep))
	}
	if rep.Verdict != messages.RunKnee || rep.Knee == nil || rep.Knee.Step != 2 || rep.LastHeld == nil || rep.LastHeld.Step != 1 {
		t.Errorf("verdict %q, knee %+v, last held %+v; want the bracket of before the overload: held step 1, knee step 2\n%s", rep.Verdict, rep.Knee, rep.LastHeld, reportText(rep))
	}
	if f := findingWith(rep, "the server did not recover after overload: held 10.0/s before it (step 1)"); f == "" || !strings.Contains(f, "after it (step 3") {
		t.Errorf("findings %q, want one saying the server did not recover, with step 3's figure", rep.Findings)
	}
	if got := verdict.ExitCode(rep); got != verdict.ExitOK {
		t.Errorf("ExitCode() = %d, want %d", got, verdict.ExitOK)
	}
}
