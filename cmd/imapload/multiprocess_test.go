package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
)

// The fleet of the multi-process test.
var (
	mpProducers = []string{"mp-p1", "mp-p2", "mp-p3"}
	// mpRates are offered until the report names a knee: the server holds
	// 2 workers / 3 ms = 667 commands/s, so 800/s is the knee unless its
	// step measured a saturated generator (a loaded machine), then 1600/s.
	mpRates = []float64{200, 800, 1600}
	// mpCapacity is the imapserver's: --workers 2 / --service-time 3ms.
	mpCapacity = 2 / 0.003
)

// TestMultiProcess is issue 5's multi-process acceptance: `imapload nats`,
// `imapload imapserver`, three `imapload producer` processes configured by
// IMAPLOAD_* variables, an aggregator and a reporter, with steps sent by
// `imapload step`. Every producer's batches arrive, the run report names the
// knee, and on SIGTERM every process flushes and exits 0.
func TestMultiProcess(t *testing.T) {
	testkit.Require(t, testkit.Long)
	t.Parallel()
	const run = "mp1"
	natsP := startProc(t, "nats", nil, "nats", "--listen", "127.0.0.1:0", "--store", t.TempDir())
	url := natsP.waitMatch(t, natsURLRe, 15*time.Second)
	imapP := startProc(t, "imapserver", nil, "imapserver", "--listen", "127.0.0.1:0", "--users", "100",
		"--workers", "2", "--service-time", "3ms", "--bcrypt-cost", "6", "--login-cache-ttl", "5s")
	addr := imapP.waitMatch(t, imapAddrRe, 15*time.Second)
	nc := connect(t, url)
	batches, results := watchBatches(t, nc, run), watchResults(t, nc, run)

	env := []string{"IMAPLOAD_NATS=" + url, "IMAPLOAD_IMAP=" + addr}
	var roles []*proc
	for _, id := range mpProducers {
		roles = append(roles, startProc(t, id, env, "producer", "--id", id))
	}
	dir := t.TempDir()
	roles = append(roles, startProc(t, "aggregator", env, "aggregator"),
		startProc(t, "reporter", env, "reporter", "--run", run, "--out", dir))
	awaitProducers(t, nc, mpProducers...)

	report := rampBySteps(t, env, run, batches, results)
	if n := batches.undecodable(); n > 0 {
		t.Errorf("%d published batches did not decode", n)
	}
	checkPhysics(t, report, mpCapacity)
	checkMPKnee(t, report)
	testkit.WaitFor(t, 20*time.Second, "report.json to match the last run report", func() bool {
		r, err := tryReadReport(filepath.Join(dir, "report.json"))
		return err == nil && len(r.Steps) == len(report.Steps) && (r.Knee == nil) == (report.Knee == nil) &&
			(r.Knee == nil || r.Knee.Step == report.Knee.Step)
	})
	shutDown(t, env, run, len(report.Steps)+1, batches, roles, []*proc{imapP, natsP})
}

// checkMPKnee checks that the run report names a knee at 800/s or more or,
// when its producers could not keep their schedule (a loaded machine), says
// that it could not measure the server and why: never a wrong knee.
func checkMPKnee(t *testing.T, r messages.RunReport) {
	t.Helper()
	switch k := r.Knee; {
	case r.Verdict == messages.RunInconclusive:
		checkCouldNotMeasure(t, r)
	case r.Verdict != messages.RunKnee || k == nil:
		t.Errorf("run report verdict %q, knee %+v; want a knee or inconclusive; steps %s", r.Verdict, k, stepRatios(r))
	case k.Rate < mpRates[1]:
		t.Errorf("run report knee at %v/s, want %v/s or more (capacity %v/s); steps %s", k.Rate, mpRates[1], mpCapacity, stepRatios(r))
	default:
		t.Logf("knee: step %d at %v/s offered, %.0f/s delivered", k.Step, k.Rate, k.DeliveredRate)
	}
}

// rampBySteps sends mpRates one `imapload step` at a time until the run
// report names a knee, checking that every producer's batches of every step
// arrived and that the aggregator heard from all of them.
func rampBySteps(t *testing.T, env []string, run string, b *seenBatches, res *seenResults) messages.RunReport {
	t.Helper()
	var report messages.RunReport
	for i, rate := range mpRates {
		step := i + 1
		out := runProc(t, env, "step", "--run", run, "--step", fmt.Sprint(step), "--rate", fmt.Sprint(rate), "--duration", "3s", "--wait", "2s")
		if want := fmt.Sprintf("%d producer(s) accepted", len(mpProducers)); !strings.Contains(out, want) {
			t.Fatalf("imapload step printed:\n%s\nwant %q", out, want)
		}
		r := res.step(t, step, 60*time.Second)
		if !r.Complete || !slices.Equal(r.Producers, mpProducers) {
			t.Errorf("step %d result: complete %v, producers %v; want complete from %v", step, r.Complete, r.Producers, mpProducers)
		}
		if got := b.awaitFinals(step, mpProducers, 10*time.Second); !slices.Equal(got, mpProducers) {
			t.Errorf("step %d: final batches from %v, want from %v (all batches: %v)", step, got, mpProducers, b.senders(step, 1))
		}
		report = res.report(t, step, 30*time.Second)
		if report.Knee != nil {
			return report
		}
	}
	return report
}

// shutDown starts a long step, waits until every producer is publishing its
// batches, then SIGTERMs the producers, the aggregator and the reporter at
// once (each must exit 0 within the bound, the producers after publishing
// their final batch), and last the servers.
func shutDown(t *testing.T, env []string, run string, step int, b *seenBatches, roles, servers []*proc) {
	t.Helper()
	runProc(t, env, "step", "--run", run, "--step", fmt.Sprint(step), "--rate", "100", "--duration", "30s", "--wait", "1s")
	testkit.WaitFor(t, 20*time.Second, "a second batch of the long step from every producer", func() bool {
		return slices.Equal(b.senders(step, 2), mpProducers)
	})
	stopAll(t, roles, 10*time.Second)
	if got := b.awaitFinals(step, mpProducers, 10*time.Second); !slices.Equal(got, mpProducers) {
		t.Errorf("after SIGTERM mid-step, final batches from %v, want from %v", got, mpProducers)
	}
	stopAll(t, servers, 10*time.Second)
}

// stopAll sends SIGTERM to every process, then checks each exits 0 in time.
func stopAll(t *testing.T, ps []*proc, within time.Duration) {
	t.Helper()
	start := time.Now()
	for _, p := range ps {
		p.signal(t)
	}
	for _, p := range ps {
		took := p.awaitExit(t, start, within)
		t.Logf("%s exited %v after SIGTERM", p.name, took.Round(time.Millisecond))
	}
}

// runProc runs the binary to completion and returns its stdout; it fails
// unless the process exits 0 within a minute.
func runProc(t *testing.T, env []string, args ...string) string {
	t.Helper()
	p := startProc(t, args[0], env, args...)
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		t.Fatalf("imapload %s still running after a minute", strings.Join(args, " "))
	}
	if p.waitErr != nil {
		t.Fatalf("imapload %s: %v\nstderr:\n%s", strings.Join(args, " "), p.waitErr, p.stderr.String())
	}
	return p.stdout.String()
}
