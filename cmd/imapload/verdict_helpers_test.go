package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
)

// The helpers of the verdict acceptance tests (verdict_test.go): a fleet of
// real imapload processes, a ramp run against it, and what the ramp printed,
// exited with and wrote.

// vStepArgs shape every ramp of these tests: short windows, a short warm-up
// and stagger, and a bounded wait for each result.
var vStepArgs = []string{"--step-duration", "4s", "--warmup", "1s", "--stagger", "500ms", "--result-wait", "30s"}

// vFleetOptions describe a fleet. The zero value is one producer against an
// imapserver with ample capacity.
// lagTolerant makes producers count as on schedule whatever their lag, for
// tests that need held steps on a loaded machine (the lag rules have tests
// of their own).
var lagTolerant = []string{"--saturation-lag", "1h"}

type vFleetOptions struct {
	name         string   // prefix of the producer ids
	producers    int      // how many (0: 1)
	imapArgs     []string // extra `imapload imapserver` flags
	imapAddr     string   // when set, no imapserver is started: the producers dial this
	producerArgs []string // extra `imapload producer` flags
	noAggregator bool     // start no aggregator
}

// vFleet is `imapload nats`, `imapload imapserver`, the producers and
// `imapload aggregator`, each a process the test's cleanup kills.
type vFleet struct {
	natsURL   string
	imapAddr  string
	env       []string // IMAPLOAD_NATS for every command
	nc        *nats.Conn
	ids       []string
	producers []*proc
}

// startVerdictFleet starts the fleet and returns once every producer is in
// the registry and the aggregator is ready.
func startVerdictFleet(t *testing.T, o vFleetOptions) *vFleet {
	t.Helper()
	f := &vFleet{imapAddr: o.imapAddr}
	natsP := startProc(t, o.name+"-nats", nil, "nats", "--listen", "127.0.0.1:0", "--store", t.TempDir())
	f.natsURL = natsP.waitMatch(t, natsURLRe, 15*time.Second)
	f.env = []string{"IMAPLOAD_NATS=" + f.natsURL}
	f.nc = connect(t, f.natsURL)
	if f.imapAddr == "" {
		args := append([]string{"imapserver", "--listen", "127.0.0.1:0", "--users", "100"}, o.imapArgs...)
		f.imapAddr = startProc(t, o.name+"-imapserver", nil, args...).waitMatch(t, imapAddrRe, 15*time.Second)
	}
	for i := range max(o.producers, 1) {
		id := fmt.Sprintf("%s-p%d", o.name, i+1)
		args := append([]string{"producer", "--id", id, "--imap", f.imapAddr, "--sessions", "8"}, o.producerArgs...)
		f.ids = append(f.ids, id)
		f.producers = append(f.producers, startProc(t, id, f.env, args...))
	}
	if !o.noAggregator {
		agg := startProc(t, o.name+"-aggregator", f.env, "aggregator", "--step-timeout", "3s")
		waitStderr(t, agg, "aggregator: ready", 15*time.Second)
	}
	awaitProducers(t, f.nc, f.ids...)
	return f
}

// waitStderr polls p's stderr until it holds want.
func waitStderr(t *testing.T, p *proc, want string, within time.Duration) {
	t.Helper()
	testkit.WaitFor(t, within, p.name+" to log "+want, func() bool {
		if p.exited() {
			t.Fatalf("%s exited (%v) before logging %q\nstderr:\n%s", p.name, p.waitErr, want, p.stderr.String())
		}
		return strings.Contains(p.stderr.String(), want)
	})
}

// vRamp is one `imapload ramp` process with its report directory.
type vRamp struct {
	p   *proc
	out string
}

// startRamp starts `imapload ramp --run run` against f with vStepArgs, the
// report written to a temporary --out, and args last (they win).
func (f *vFleet) startRamp(t *testing.T, run string, args ...string) *vRamp {
	t.Helper()
	r := &vRamp{out: t.TempDir()}
	all := append([]string{"ramp", "--run", run, "--out", r.out}, vStepArgs...)
	r.p = startProc(t, "ramp-"+run, f.env, append(all, args...)...)
	return r
}

// settleWait is how long a ramp may take, once the result of every step it
// offered is on the stream, to print them and exit: far more than it needs
// (no I/O but writing the report), so a ramp still running then hangs.
const settleWait = 30 * time.Second

// settle waits until the aggregator has published a result for every step
// the ramp printed as offered (or the ramp exits), then waits settleWait for
// the ramp to exit, and reads its report.json: a ramp still running then
// hangs, which the failure says.
func (r *vRamp) settle(t *testing.T, res *seenResults, within time.Duration) vOutcome {
	t.Helper()
	testkit.WaitFor(t, within, r.p.name+"'s steps to have results", func() bool {
		if r.p.exited() {
			return true
		}
		offered := stepOfferedRe.FindAllStringSubmatch(r.p.stdout.String(), -1)
		res.mu.Lock()
		defer res.mu.Unlock()
		for _, m := range offered {
			if n, _ := strconv.Atoi(m[1]); res.steps[n].Step != n {
				return false
			}
		}
		return len(offered) > 0
	})
	return r.finish(t, awaitOutcome(t, r.p, settleWait, ": the aggregator published the result of every step it offered, yet it did not print them and exit: it hangs"))
}

// vOutcome is what a finished ramp (or any imapload command) left behind.
type vOutcome struct {
	code           int
	stdout, stderr string
	report         messages.RunReport
	reportErr      error // why report.json could not be read, nil when it was
}

// wait waits for the ramp to exit and reads its report.json.
func (r *vRamp) wait(t *testing.T, within time.Duration) vOutcome {
	t.Helper()
	return r.finish(t, awaitOutcome(t, r.p, within, ""))
}

// finish reads the report.json of a ramp that exited and logs its progress.
func (r *vRamp) finish(t *testing.T, o vOutcome) vOutcome {
	t.Helper()
	o.report, o.reportErr = tryReadReport(filepath.Join(r.out, "report.json"))
	t.Logf("%s exited %d:\n%s\n%s", r.p.name, o.code, strings.Join(o.progress(), "\n"), o.errorLine())
	return o
}

// runOnce runs the binary with args to completion, whatever its exit code.
func runOnce(t *testing.T, env []string, within time.Duration, args ...string) vOutcome {
	t.Helper()
	return awaitOutcome(t, startProc(t, args[0], env, args...), within, "")
}

// awaitOutcome waits for p to exit and returns its exit code and output; if
// it does not exit in time, the failure adds why that is wrong.
func awaitOutcome(t *testing.T, p *proc, within time.Duration, why string) vOutcome {
	t.Helper()
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case <-p.done:
	case <-timer.C:
		t.Fatalf("imapload %s still running after %v%s\nstdout (last 40 lines):\n%s\nstderr:\n%s", strings.Join(p.cmd.Args[1:], " "), within, why, tail(p.stdout.String(), 40), p.stderr.String())
	}
	return vOutcome{code: p.cmd.ProcessState.ExitCode(), stdout: p.stdout.String(), stderr: p.stderr.String()}
}

// String shows an outcome in a failure message.
func (o vOutcome) String() string {
	return fmt.Sprintf("exit %d\n--- stdout:\n%s\n--- stderr:\n%s", o.code, o.stdout, o.stderr)
}

// progress returns the lines the ramp printed about its steps: each step
// offered, each step done with its reasons, and why the ramp stopped.
func (o vOutcome) progress() []string {
	var out []string
	for _, l := range strings.Split(o.stdout, "\n") {
		if stepOfferedRe.MatchString(l) || strings.Contains(l, " done: ") || reasonLineRe.MatchString(l) || strings.HasPrefix(l, "ramp stopped: ") {
			out = append(out, l)
		}
	}
	return out
}

// reasonLineRe is a reason or remedy line under a "step N done:" line.
var reasonLineRe = regexp.MustCompile(`^    [a-z][a-z_ ]*: `)

// stepBlock returns the lines the ramp printed when step n finished: the
// "step n done: …" line and the indented reason lines under it.
func (o vOutcome) stepBlock(n int) []string {
	lines := strings.Split(o.stdout, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, fmt.Sprintf("step %d done: ", n)) {
			continue
		}
		block := []string{l}
		for _, more := range lines[i+1:] {
			if !reasonLineRe.MatchString(more) {
				break
			}
			block = append(block, more)
		}
		return block
	}
	return nil
}

// checkExit fails unless the command exited with want.
func checkExit(t *testing.T, o vOutcome, want int, why string) {
	t.Helper()
	if o.code != want {
		t.Errorf("exit code = %d, want %d (%s)\n%s", o.code, want, why, o)
	}
}

// checkInconclusive checks that step n was printed as INCONCLUSIVE with a
// reason of code, its detail and what to do, and returns the detail.
func checkInconclusive(t *testing.T, o vOutcome, n int, code string) string {
	t.Helper()
	block := o.stepBlock(n)
	if len(block) == 0 {
		t.Errorf("no %q line in the ramp's output\n%s", fmt.Sprintf("step %d done:", n), o)
		return ""
	}
	if !strings.HasSuffix(block[0], ": INCONCLUSIVE") {
		t.Errorf("step %d line = %q, want it to end with \": INCONCLUSIVE\"\n%s", n, block[0], strings.Join(block, "\n"))
	}
	for i, l := range block {
		if detail, ok := strings.CutPrefix(l, "    "+code+": "); ok {
			if i+1 >= len(block) || !strings.HasPrefix(block[i+1], "    what to do: ") {
				t.Errorf("step %d reason %s is not followed by a \"what to do:\" line:\n%s", n, code, strings.Join(block, "\n"))
			}
			return detail
		}
	}
	t.Errorf("step %d printed no reason %q; its block:\n%s", n, code, strings.Join(block, "\n"))
	return ""
}

// rampStoppedRe is the ramp's last line of progress.
var rampStoppedRe = regexp.MustCompile(`(?m)^ramp stopped: (.*)$`)

// stopLine returns what the ramp said about why it stopped, or "".
func (o vOutcome) stopLine() string {
	if m := rampStoppedRe.FindStringSubmatch(o.stdout); m != nil {
		return m[1]
	}
	return ""
}

// errorLine returns the line main printed with the exit code: the stderr
// line starting with "imapload: ", or "".
func (o vOutcome) errorLine() string {
	for _, l := range strings.Split(o.stderr, "\n") {
		if strings.HasPrefix(l, "imapload: ") {
			return l
		}
	}
	return ""
}

// checkErrorLine checks that main printed the error line with prefix.
func checkErrorLine(t *testing.T, o vOutcome, prefix string) string {
	t.Helper()
	l := o.errorLine()
	if !strings.HasPrefix(l, prefix) {
		t.Errorf("error line = %q, want it to start with %q\n%s", l, prefix, o)
	}
	return l
}

// reportStep returns step n of report.json, failing if it is not there.
func reportStep(t *testing.T, o vOutcome, n int) messages.StepResult {
	t.Helper()
	if o.reportErr != nil {
		t.Fatalf("report.json: %v\n%s", o.reportErr, o)
	}
	for _, s := range o.report.Steps {
		if s.Step == n {
			return s
		}
	}
	t.Fatalf("report.json has no step %d (steps %s)\n%s", n, stepRatios(o.report), o)
	return messages.StepResult{}
}

// checkAllHeld checks that report.json has steps and that every one held,
// as it must on a server of ample capacity, and names the reasons of those
// that did not.
func checkAllHeld(t *testing.T, o vOutcome) {
	t.Helper()
	if o.reportErr != nil {
		t.Fatalf("report.json: %v\n%s", o.reportErr, o)
	}
	for _, s := range o.report.Steps {
		if s.Verdict != messages.VerdictHeld {
			t.Errorf("report step %d at %.0f/s: verdict %q, reasons %v; want held on a server of ample capacity\n%s",
				s.Step, s.TargetRate, s.Verdict, reasonCodes(s.Reasons), reasonsText(o.report))
		}
	}
}

// reasonCodes lists the codes of rs.
func reasonCodes(rs []messages.Reason) []string {
	var c []string
	for _, r := range rs {
		c = append(c, r.Code)
	}
	return c
}

// reasonsText shows every step's verdict and reasons of a report, for a
// failure message.
func reasonsText(r messages.RunReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "run verdict %q %v", r.Verdict, reasonCodes(r.Reasons))
	for _, s := range r.Steps {
		fmt.Fprintf(&b, "\n  step %d at %.0f/s: %s, ratio %.2f, offered %.1f/s", s.Step, s.TargetRate, s.Verdict, s.Ratio, s.OfferedRate)
		for _, x := range s.Reasons {
			fmt.Fprintf(&b, "\n    %s: %s", x.Code, x.Detail)
		}
	}
	return b.String()
}

// windowWatch records, per step and producer, how far into the measurement
// window the producer's batches of a run reached.
type windowWatch struct {
	mu      sync.Mutex
	reached map[int]map[string]time.Duration // step → producer → largest To
}

// watchWindow subscribes to run's batches until the test ends.
func watchWindow(t *testing.T, nc *nats.Conn, run string) *windowWatch {
	t.Helper()
	w := &windowWatch{reached: map[int]map[string]time.Duration{}}
	subscribe(t, nc, messages.RunSamplesFilter(run), func(m *nats.Msg) {
		b, err := messages.DecodeBatch(m.Data)
		if err != nil || b.Seq == 0 {
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.reached[b.Step] == nil {
			w.reached[b.Step] = map[string]time.Duration{}
		}
		if to := time.Duration(b.To); to > w.reached[b.Step][b.Producer] {
			w.reached[b.Step][b.Producer] = to
		}
	})
	return w
}

// awaitWindow waits until every producer in ids has published a batch of
// step that reaches at least into its measurement window: the window has
// been running that long.
func (w *windowWatch) awaitWindow(t *testing.T, step int, into, within time.Duration, ids ...string) {
	t.Helper()
	testkit.WaitFor(t, within, fmt.Sprintf("batches of step %d %v into its window from %v", step, into, ids), func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, id := range ids {
			if w.reached[step][id] < max(into, 1) {
				return false
			}
		}
		return true
	})
}
