package main

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// The verdict acceptance tests: real processes of the built binary (nats,
// imapserver, producers, aggregator, ramp) in situations where a run must not
// name a knee it did not measure, and the ramp's exit code, printed verdict
// and report.json say why. Each test has its own NATS and IMAP ports.

// rampWait bounds one ramp of a few 4 s steps, with room for a busy machine.
const rampWait = 2 * time.Minute

// stallStep1 runs a ramp of 40 and 80/s over two producers queueing at most
// queue commands each and SIGSTOPs the first for 3 s inside step 1's
// window: a lag of seconds, made by the test and not by loading the CPU.
func stallStep1(t *testing.T, name, run string, queue int) (vOutcome, *proc) {
	f := startVerdictFleet(t, vFleetOptions{name: name, producers: 2, producerArgs: []string{"--queue", strconv.Itoa(queue)}})
	w := watchWindow(t, f.nc, run)
	r := f.startRamp(t, run, "--rates", "40,80", "--step-duration", "5s")
	w.awaitWindow(t, 1, 500*time.Millisecond, time.Minute, f.ids...)
	victim := f.producers[0]
	pid := victim.cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP %s: %v", victim.name, err)
	}
	time.Sleep(3 * time.Second) // the stall itself: the producer cannot run for 3 s
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatalf("SIGCONT %s: %v", victim.name, err)
	}
	return r.wait(t, rampWait), victim
}

// TestVerdictStarvedProducer: a producer SIGSTOPped for 3 s inside step 1's
// window and then continued could not keep its schedule without being
// CPU-bound; with a queue of one command it drops the backlog it finds on
// SIGCONT, so the step falls short of its target on a stalled generator: it
// is inconclusive (generator_stalled), the ramp stops there and exits 4.
func TestVerdictStarvedProducer(t *testing.T) {
	t.Parallel()
	const run = "v-starved"
	o, victim := stallStep1(t, "vstarve", run, 1)

	checkExit(t, o, verdict.ExitInconclusive, "a stalled producer's step cannot be judged")
	s := reportStep(t, o, 1)
	switch {
	case verdict.Has(s, messages.ReasonGeneratorStalled):
		if d := checkInconclusive(t, o, 1, messages.ReasonGeneratorStalled); !strings.Contains(d, victim.name) {
			t.Errorf("step 1 generator_stalled detail = %q, want it to name %s", d, victim.name)
		}
	case verdict.Has(s, messages.ReasonHostOverloaded):
		t.Errorf("step 1 reasons %v: host_overloaded, want generator_stalled; the host was busy while %s was stopped, or the stop was not recognised as one (Health.Stopped unset)\n%s",
			reasonCodes(s.Reasons), victim.name, reasonsText(o.report))
	default:
		t.Errorf("step 1 reasons %v, want %s (the producer was SIGSTOPped for 3 s in the window)\n%s",
			reasonCodes(s.Reasons), messages.ReasonGeneratorStalled, reasonsText(o.report))
	}
	if verdict.Has(s, messages.ReasonIncomplete) {
		t.Errorf("step 1 reasons %v include incomplete, but every producer ran the whole window and sent its final batch (stopped_early %v, missing %v)\n%s",
			reasonCodes(s.Reasons), s.StoppedEarly, s.Missing, reasonsText(o.report))
	}
	if s.Verdict != messages.VerdictInconclusive || len(o.report.Steps) != 1 {
		t.Errorf("report: step 1 verdict %q with %d step(s), want inconclusive and the ramp stopped there\n%s", s.Verdict, len(o.report.Steps), reasonsText(o.report))
	}
	if stop := o.stopLine(); !strings.Contains(stop, "step 1") || !strings.Contains(stop, "inconclusive") {
		t.Errorf("ramp stopped: %q, want it to stop at step 1, inconclusive\n%s", stop, o)
	}
	checkErrorLine(t, o, "imapload: inconclusive, no verdict: ")
}

// TestVerdictHeldDespiteLag: the same stall with room in the queue for the
// whole backlog: the server was sent and delivered the target, so step 1
// held (issue 22, finding 4), its latencies marked as carrying the
// stalled producer's lag, with the figure; the ramp goes on.
func TestVerdictHeldDespiteLag(t *testing.T) {
	t.Parallel()
	o, victim := stallStep1(t, "vlag", "v-lag", 1000)
	checkExit(t, o, verdict.ExitOK, "both steps held")
	s := reportStep(t, o, 1)
	if s.Verdict != messages.VerdictHeld || len(s.Reasons) > 0 {
		t.Fatalf("step 1: verdict %q, reasons %v; want held: every command was delivered\n%s", s.Verdict, reasonCodes(s.Reasons), reasonsText(o.report))
	}
	if len(s.Caveats) != 1 || s.Caveats[0].Code != messages.ReasonGeneratorStalled ||
		!strings.Contains(s.Caveats[0].Detail, "latencies carry the generator's lag") || !strings.Contains(s.Caveats[0].Detail, victim.name+" lag P99 ") {
		t.Errorf("step 1 caveats %+v, want one generator_stalled caveat naming %s's lag P99", s.Caveats, victim.name)
	}
	block := strings.Join(o.stepBlock(1), "\n")
	if !strings.Contains(block, "HELD") || !strings.Contains(block, "caveat generator_stalled: ") {
		t.Errorf("step 1 printed:\n%s\nwant HELD and its caveat", block)
	}
}

// TestVerdictTLSMismatch: the server speaks implicit TLS, the producers
// plain IMAP; nothing succeeds, so the run is failing (exit 3) and names the
// error kind that was seen most.
func TestVerdictTLSMismatch(t *testing.T) {
	t.Parallel()
	f := startVerdictFleet(t, vFleetOptions{name: "vtls", imapArgs: []string{"--tls"}, producerArgs: []string{"--op-timeout", "1s"}})
	o := f.startRamp(t, "v-tls", "--rates", "40").wait(t, rampWait)
	checkFailing(t, o, "")
}

// TestVerdictWrongPassword: every LOGIN is refused; the run is failing (exit
// 3) with an authentication error, and the producer logs the first error of
// that kind once (and never the password).
func TestVerdictWrongPassword(t *testing.T) {
	t.Parallel()
	const wrong = "not-the-secret-7731"
	f := startVerdictFleet(t, vFleetOptions{name: "vpass", producerArgs: []string{"--accounts-password", wrong}})
	o := f.startRamp(t, "v-pass", "--rates", "40").wait(t, rampWait)
	checkFailing(t, o, "authentic")

	log := f.producers[0].stderr.String()
	var logged []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(strings.ToLower(l), "authentic") && !strings.Contains(l, "preflight:") { // the check at start is its own line
			logged = append(logged, l)
		}
	}
	if !strings.Contains(log, "preflight: the login was refused") || !strings.Contains(log, "check the password") {
		t.Errorf("producer stderr does not name the refused login at start with its fix:\n%s", tail(log, 30))
	}
	if len(logged) != 1 {
		t.Errorf("producer stderr has %d lines about the authentication error, want 1 (the first error of its kind, logged once):\n%s\n--- whole stderr:\n%s",
			len(logged), strings.Join(logged, "\n"), tail(log, 30))
	}
	if strings.Contains(log, wrong) {
		t.Errorf("producer stderr holds the password %q", wrong)
	}
}

// TestVerdictClosedPort: nothing listens where the producer dials; the run
// is failing (exit 3) with connections refused.
func TestVerdictClosedPort(t *testing.T) {
	t.Parallel()
	f := startVerdictFleet(t, vFleetOptions{name: "vclosed", imapAddr: testkit.ClosedAddr(t)})
	o := f.startRamp(t, "v-closed", "--rates", "40").wait(t, rampWait)
	checkFailing(t, o, "connection refused")
}

// checkFailing checks a ramp whose server answered nothing correctly: exit
// 3, step 1 inconclusive with reason failing, the run failing, and the
// error line naming the top error kind (which mentions kind, if not "").
func checkFailing(t *testing.T, o vOutcome, kind string) {
	t.Helper()
	checkExit(t, o, verdict.ExitFailing, "the server is not answering correctly")
	line := checkErrorLine(t, o, "imapload: the server is not answering correctly: ")
	detail := checkInconclusive(t, o, 1, messages.ReasonFailing)
	if o.reportErr != nil {
		t.Fatalf("report.json: %v\n%s", o.reportErr, o)
	}
	if o.report.Verdict != messages.RunFailing || o.report.Knee != nil {
		t.Errorf("report.json verdict %q, knee %+v; want %q and no knee\n%s", o.report.Verdict, o.report.Knee, messages.RunFailing, reasonsText(o.report))
	}
	if len(o.report.TopErrors) == 0 {
		t.Fatalf("report.json has no top_errors\n%s", reasonsText(o.report))
	}
	top := o.report.TopErrors[0]
	named := top.Phase + ": " + top.Kind
	for what, s := range map[string]string{"error line": line, "step 1 failing detail": detail} {
		if !strings.Contains(s, named) {
			t.Errorf("%s = %q, want it to name the top error kind %q", what, s, named)
		}
	}
	if kind != "" && !strings.Contains(strings.ToLower(named), kind) {
		t.Errorf("top error kind %q, want one that mentions %q (all: %+v)", named, kind, o.report.TopErrors)
	}
	t.Logf("top error kind: %s (%d)", named, top.Count)
}

// TestVerdictProducerKilledMidStep: one of three producers is killed (-9)
// inside step 1's window; its final batch never comes, so the step is
// inconclusive (incomplete), never the knee, and the ramp exits 4.
func TestVerdictProducerKilledMidStep(t *testing.T) {
	testkit.Require(t, testkit.Long)
	t.Parallel()
	const run = "v-killmid"
	f := startVerdictFleet(t, vFleetOptions{name: "vkillmid", producers: 3})
	w := watchWindow(t, f.nc, run)
	r := f.startRamp(t, run, "--rates", "60,120")
	w.awaitWindow(t, 1, time.Second, time.Minute, f.ids...)
	victim := f.producers[1]
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatalf("kill -9 %s: %v", victim.name, err)
	}
	o := r.wait(t, rampWait)

	checkExit(t, o, verdict.ExitInconclusive, "the first step is incomplete, before any knee")
	checkInconclusive(t, o, 1, messages.ReasonIncomplete)
	checkErrorLine(t, o, "imapload: inconclusive, no verdict: ")
	s := reportStep(t, o, 1)
	if s.Verdict != messages.VerdictInconclusive || !verdict.Has(s, messages.ReasonIncomplete) || !slices.Contains(s.Missing, victim.name) {
		t.Errorf("report step 1: verdict %q, reasons %v, missing %v; want inconclusive, incomplete, %s missing\n%s",
			s.Verdict, reasonCodes(s.Reasons), s.Missing, victim.name, reasonsText(o.report))
	}
	if k := o.report.Knee; k != nil && k.Step == 1 {
		t.Errorf("report knee at step 1, the step a producer was killed in\n%s", reasonsText(o.report))
	}
	if o.report.Verdict != messages.RunInconclusive {
		t.Errorf("report verdict %q, want %q\n%s", o.report.Verdict, messages.RunInconclusive, reasonsText(o.report))
	}
}

// stepOfferedRe is the line the ramp prints when it publishes a step.
var stepOfferedRe = regexp.MustCompile(`(?m)^step (\d+): (\d+) commands/s offered by (\d+) producer\(s\)`)

// TestVerdictProducerKilledBeforeStep: one of three registered producers is
// killed (-9) just before the ramp starts, while its registry entry lingers.
// The ramp divides the rate by 3, hears 2 accept, and re-issues the step
// divided by 2: the measured step offers its target and, on a server of
// ample capacity, holds (no knee, exit 0).
func TestVerdictProducerKilledBeforeStep(t *testing.T) {
	t.Parallel()
	const run = "v-killbefore"
	// The run must reach a verdict whatever else loads the machine: a
	// schedule lag is no reason to void a step here.
	f := startVerdictFleet(t, vFleetOptions{name: "vkillpre", producers: 3, producerArgs: lagTolerant})
	victim := f.producers[2]
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatalf("kill -9 %s: %v", victim.name, err)
	}
	<-victim.done
	res := watchResults(t, f.nc, run)
	o := f.startRamp(t, run, "--rates", "60").settle(t, res, rampWait)

	checkExit(t, o, verdict.ExitOK, "the re-issued step measured a server of ample capacity")
	offered := stepOfferedRe.FindAllStringSubmatch(o.stdout, -1)
	reissued := strings.Contains(o.stderr, "re-issuing")
	if len(offered) < 2 && !reissued {
		t.Errorf("the ramp printed %d step line(s) and no re-issue warning, want the step re-issued to the 2 producers that accepted\n%s", len(offered), o)
	}
	for _, m := range offered {
		if m[3] != "2" {
			t.Errorf("ramp printed %q, want every step offered by the 2 live producers", m[0])
		}
	}
	if o.reportErr != nil {
		t.Fatalf("report.json: %v\n%s", o.reportErr, o)
	}
	for _, s := range o.report.Steps {
		if d := s.OfferedRate/s.TargetRate - 1; d > verdict.RateTolerance || d < -verdict.RateTolerance {
			t.Errorf("report step %d offered_rate %.1f/s, target %.0f/s (%+.1f%%), want within 2%%\n%s", s.Step, s.OfferedRate, s.TargetRate, 100*d, reasonsText(o.report))
		}
	}
	checkAllHeld(t, o)
	if o.report.Verdict != messages.RunNoKnee || o.report.Knee != nil {
		t.Errorf("report verdict %q, knee %+v; want %q, no false knee\n%s", o.report.Verdict, o.report.Knee, messages.RunNoKnee, reasonsText(o.report))
	}
}

// TestVerdictOtherRunInterrupts: a valid step command for another run,
// published while a ramp step runs, ends that step early on every producer:
// it is inconclusive (incomplete, stopped early) and the ramp exits 4.
func TestVerdictOtherRunInterrupts(t *testing.T) {
	t.Parallel()
	const run = "v-interrupted"
	f := startVerdictFleet(t, vFleetOptions{name: "vother", producers: 2})
	w := watchWindow(t, f.nc, run)
	r := f.startRamp(t, run, "--rates", "40,80")
	w.awaitWindow(t, 1, time.Second, time.Minute, f.ids...)
	other := runOnce(t, f.env, time.Minute, "step", "--run", "v-other", "--step", "1", "--rate", "10", "--duration", "3s")
	checkExit(t, other, verdict.ExitOK, "imapload step publishes a valid command")
	o := r.wait(t, rampWait)

	checkExit(t, o, verdict.ExitInconclusive, "the interrupted step cannot be judged")
	detail := checkInconclusive(t, o, 1, messages.ReasonIncomplete)
	if !strings.Contains(detail, "stopped") {
		t.Errorf("step 1 incomplete detail = %q, want it to say the producers stopped before the window ended", detail)
	}
	checkErrorLine(t, o, "imapload: inconclusive, no verdict: ")
	s := reportStep(t, o, 1)
	if !slices.Equal(s.StoppedEarly, f.ids) || o.report.Knee != nil {
		t.Errorf("report step 1: stopped_early %v, knee %+v; want %v stopped early and no knee\n%s", s.StoppedEarly, o.report.Knee, f.ids, reasonsText(o.report))
	}
}

// TestVerdictSelectNo: a server that answers 20% of mailbox commands NO
// makes some SELECTs fail; the sessions must not then send FETCH or STORE
// outside the selected state, so no error kind is the client's own bug.
func TestVerdictSelectNo(t *testing.T) {
	t.Parallel()
	f := startVerdictFleet(t, vFleetOptions{name: "vselno", imapArgs: []string{"--no-fraction", "0.2"}})
	o := f.startRamp(t, "v-selno", "--rates", "60").wait(t, rampWait)
	if o.code == verdict.ExitError || o.code == verdict.ExitUsage {
		t.Fatalf("ramp exit %d, want a run carried out\n%s", o.code, o)
	}
	if o.reportErr != nil {
		t.Fatalf("report.json: %v\n%s", o.reportErr, o)
	}
	var kinds []string
	for _, s := range o.report.Steps {
		for _, e := range s.Errors {
			kinds = append(kinds, fmt.Sprintf("step %d %s: %s (%d)", s.Step, e.Phase, e.Kind, e.Count))
			low := strings.ToLower(e.Kind)
			if strings.Contains(e.Kind, "CLIENTBUG") || strings.Contains(low, "selected state") {
				t.Errorf("step %d error %s: %q (%d, e.g. %q): a command sent outside the selected state after a failed SELECT",
					s.Step, e.Phase, e.Kind, e.Count, e.Example)
			}
		}
	}
	if len(kinds) == 0 {
		t.Errorf("report.json lists no error at all, want the server's NO answers (--no-fraction 0.2)\n%s", reasonsText(o.report))
	}
	t.Logf("error kinds:\n  %s", strings.Join(kinds, "\n  "))
}

// TestVerdictUsage: impossible ramp flags exit 2 and name the problem before
// anything is sent: --nats points at a closed port, which a ramp that tried
// to connect would report with exit 1 (the last case shows it does).
func TestVerdictUsage(t *testing.T) {
	t.Parallel()
	natsURL := "nats://" + testkit.ClosedAddr(t)
	for _, tc := range []struct {
		name string
		args []string
		want int
		says string
	}{
		{name: "factor below 1", args: []string{"--factor", "0.5"}, want: verdict.ExitUsage, says: "factor 0.5"},
		{name: "factor 1", args: []string{"--factor", "1"}, want: verdict.ExitUsage, says: "factor 1"},
		{name: "threshold 2", args: []string{"--threshold", "2"}, want: verdict.ExitUsage, says: "threshold 2"},
		{name: "start 0", args: []string{"--start", "0"}, want: verdict.ExitUsage, says: "start 0"},
		{name: "unknown phase", args: []string{"--max-p99", "nosuchphase=1ms"}, want: verdict.ExitUsage, says: "nosuchphase"},
		{name: "valid flags, no NATS", args: nil, want: verdict.ExitError, says: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"ramp", "--nats", natsURL, "--run", "v-usage"}, tc.args...)
			o := runOnce(t, nil, time.Minute, args...)
			checkExit(t, o, tc.want, "imapload "+strings.Join(args, " "))
			if l := o.errorLine(); !strings.Contains(l, tc.says) {
				t.Errorf("imapload %s: error line %q, want it to name %q", strings.Join(args, " "), l, tc.says)
			}
			if tc.want == verdict.ExitUsage && stepOfferedRe.MatchString(o.stdout) {
				t.Errorf("imapload %s printed a published step:\n%s", strings.Join(args, " "), o.stdout)
			}
		})
	}
}

// TestVerdictThresholds: on a healthy run, a P99 limit nothing meets fails
// the run (exit 5, "threshold failed"), and limits it meets pass (exit 0).
func TestVerdictThresholds(t *testing.T) {
	testkit.Require(t, testkit.Long)
	t.Parallel()
	// The thresholds are judged on held steps, so they must hold whatever else
	// loads the machine: a schedule lag is no reason to void a step here.
	f := startVerdictFleet(t, vFleetOptions{name: "vthresh", producerArgs: lagTolerant})
	o := f.startRamp(t, "v-thresh-fail", "--rates", "50,100", "--step-duration", "3s", "--max-p99", "fetch=1us").wait(t, rampWait)
	checkExit(t, o, verdict.ExitThreshold, "no fetch answers within 1µs")
	checkAllHeld(t, o)
	if l := checkErrorLine(t, o, "imapload: threshold failed: "); !strings.Contains(l, "max-p99 fetch=") {
		t.Errorf("error line %q, want it to name the failed max-p99 fetch threshold", l)
	}
	if o.reportErr == nil && o.report.Verdict != messages.RunNoKnee {
		t.Errorf("report verdict %q, want %q (the threshold failed, the run did not)\n%s", o.report.Verdict, messages.RunNoKnee, reasonsText(o.report))
	}

	o = f.startRamp(t, "v-thresh-pass", "--rates", "50,100", "--step-duration", "3s",
		"--max-p99", "fetch=10s", "--expect-knee-above", "10").wait(t, rampWait)
	checkExit(t, o, verdict.ExitOK, "fetch P99 within 10s and the server held above 10/s")
	checkAllHeld(t, o)
	for _, c := range o.report.Thresholds {
		if !c.Pass {
			t.Errorf("threshold %s failed: %s\n%s", c.Name, c.Detail, reasonsText(o.report))
		}
	}
	if len(o.report.Thresholds) != 2 {
		t.Errorf("report.json has %d thresholds, want 2 (max-p99, expect-knee-above): %+v", len(o.report.Thresholds), o.report.Thresholds)
	}
}
