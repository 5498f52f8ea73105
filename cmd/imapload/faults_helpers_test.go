package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
)

// The helpers of the fault suite (faults_*_test.go): a fleet of real imapload
// processes whose servers keep their ports and stores, so a test can kill
// (SIGKILL) and restart any of them; steps sent by `imapload step`; and what
// the streams hold, read with the test's own client.

// faultOptions describe a fault fleet. The zero value is two producers, no
// reporter, no authentication.
type faultOptions struct {
	name       string   // prefix of every process name and producer id
	producers  int      // how many (0: 2)
	natsArgs   []string // extra `imapload nats` flags
	clientArgs []string // extra flags of every NATS client: producers, aggregator, reporter, step
	natsOpts   []nats.Option
	reportOut  string // when set, a reporter for every run writes there
}

// faultFleet is `imapload nats`, `imapload imapserver`, the producers, the
// aggregator and maybe a reporter, each a process the test's cleanup kills.
// The servers listen on fixed ports so a restart finds them where they were.
type faultFleet struct {
	o                  faultOptions
	natsAddr, natsURL  string
	store              string
	imapAddr           string
	env                []string
	nc                 *nats.Conn
	js                 jetstream.JetStream
	natsP, imapP, aggP *proc
	ids                []string
	producers          []*proc
	all                []*proc // every process started, `imapload step` included
	restarts           int     // servers and aggregators started, to name them apart
}

// start starts a process of the fleet (startProc) and keeps it in all.
func (f *faultFleet) start(t *testing.T, name string, env []string, args ...string) *proc {
	t.Helper()
	p := startProc(t, name, env, args...)
	f.all = append(f.all, p)
	return p
}

// faultProducerArgs: producers that count as on schedule on a loaded machine
// (lagTolerant), with few sessions.
var faultProducerArgs = append([]string{"--sessions", "8"}, lagTolerant...)

// startFaultFleet starts the fleet and returns once every producer is in the
// registry and the aggregator is ready.
func startFaultFleet(t *testing.T, o faultOptions) *faultFleet {
	t.Helper()
	f := &faultFleet{o: o, store: t.TempDir()}
	f.natsAddr = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	f.startNATS(t)
	f.env = []string{"IMAPLOAD_NATS=" + f.natsURL}
	f.nc = connect(t, f.natsURL, append([]nats.Option{nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond)}, o.natsOpts...)...)
	f.js, _ = jetstream.New(f.nc)
	f.imapAddr = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	f.startIMAP(t)
	if o.producers == 0 {
		o.producers = 2
	}
	for i := range o.producers {
		id := fmt.Sprintf("%s-p%d", o.name, i+1)
		args := append([]string{"producer", "--id", id, "--imap", f.imapAddr}, faultProducerArgs...)
		f.ids = append(f.ids, id)
		f.producers = append(f.producers, f.start(t, id, f.env, append(args, o.clientArgs...)...))
	}
	f.startAggregator(t)
	if o.reportOut != "" {
		f.start(t, o.name+"-reporter", f.env, append([]string{"reporter", "--out", o.reportOut}, o.clientArgs...)...)
	}
	awaitProducers(t, f.nc, f.ids...)
	return f
}

// startNATS starts `imapload nats` on the fleet's address and store.
func (f *faultFleet) startNATS(t *testing.T) {
	t.Helper()
	f.restarts++
	args := append([]string{"nats", "--listen", f.natsAddr, "--store", f.store}, f.o.natsArgs...)
	f.natsP = f.start(t, fmt.Sprintf("%s-nats-%d", f.o.name, f.restarts), nil, args...)
	f.natsURL = f.natsP.waitMatch(t, natsURLRe, 30*time.Second)
}

// startIMAP starts `imapload imapserver` on the fleet's address.
func (f *faultFleet) startIMAP(t *testing.T) {
	t.Helper()
	f.restarts++
	f.imapP = f.start(t, fmt.Sprintf("%s-imapserver-%d", f.o.name, f.restarts), nil,
		"imapserver", "--listen", f.imapAddr, "--users", "100")
	f.imapP.waitMatch(t, imapAddrRe, 30*time.Second)
}

// startAggregator starts an aggregator (3 s step timeout) and waits until it
// is ready.
func (f *faultFleet) startAggregator(t *testing.T) {
	t.Helper()
	f.restarts++
	args := append([]string{"aggregator", "--step-timeout", "3s"}, f.o.clientArgs...)
	f.aggP = f.start(t, fmt.Sprintf("%s-aggregator-%d", f.o.name, f.restarts), f.env, args...)
	waitStderr(t, f.aggP, "aggregator: ready", 30*time.Second)
}

// kill sends SIGKILL to p and waits until it has exited.
func kill(t *testing.T, p *proc) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !p.exited() {
		t.Fatalf("SIGKILL %s: %v", p.name, err)
	}
	testkit.WaitFor(t, 10*time.Second, p.name+" to exit after SIGKILL", p.exited)
}

// acceptedRe is what `imapload step` prints about the producers' answers.
var acceptedRe = regexp.MustCompile(`(\d+) producer\(s\) accepted`)

// step sends a step command with `imapload step` (1 s warm-up, answers
// collected for 2 s) and fails unless every producer of the fleet accepted.
func (f *faultFleet) step(t *testing.T, run string, n int, rate float64, d time.Duration, extra ...string) {
	t.Helper()
	args := []string{"step", "--run", run, "--step", strconv.Itoa(n), "--rate", fmt.Sprint(rate),
		"--duration", d.String(), "--warmup", "1s", "--wait", "2s"}
	o := awaitOutcome(t, f.start(t, "step", f.env, append(append(args, f.o.clientArgs...), extra...)...), time.Minute, "")
	if o.code != 0 {
		t.Fatalf("imapload step: %v", o)
	}
	out := o.stdout
	if m := acceptedRe.FindStringSubmatch(out); m == nil || m[1] != strconv.Itoa(len(f.ids)) {
		t.Fatalf("imapload step printed:\n%s\nwant %d producer(s) accepted", out, len(f.ids))
	}
}

// vmHWM is a process's peak resident set (VmHWM of /proc/<pid>/status), in
// bytes.
func vmHWM(t *testing.T, p *proc) uint64 {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		t.Fatalf("%s status: %v", p.name, err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("%s VmHWM %q: %v", p.name, v, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("%s status has no VmHWM", p.name)
	return 0
}

// checkWhole checks that r is complete, from exactly the fleet's producers,
// with nothing missing or lost, and that it pooled each stored batch of its
// step once (and that the stream holds every batch, numbered from 0 without
// a gap, of each producer; a batch after a producer's first final one is
// not the producer's): its Batches and Scheduled are those of the fleet's distinct
// (producer, seq) batches in the stream (a batch stored twice, with the
// duplicate window gone after a NATS restart, counts once).
func (f *faultFleet) checkWhole(t *testing.T, r messages.StepResult) {
	t.Helper()
	if !r.Complete || len(r.Missing) > 0 || r.Lost != 0 || strings.Join(r.Producers, ",") != strings.Join(f.ids, ",") {
		t.Errorf("%s step %d result: complete %v, producers %v, missing %v, lost %d; want complete from %v, none lost",
			r.Run, r.Step, r.Complete, r.Producers, r.Missing, r.Lost, f.ids)
	}
	batches, _ := streamBatches(t, f.js, r.Run, r.Step)
	final := map[string]uint64{}
	for _, b := range batches {
		if old, ok := final[b.Producer]; b.Final && (!ok || b.Seq < old) {
			final[b.Producer] = b.Seq
		}
	}
	var n, scheduled uint64
	last, count := map[string]uint64{}, map[string]uint64{}
	for _, b := range batches {
		if end, ok := final[b.Producer]; slices.Contains(f.ids, b.Producer) && (!ok || b.Seq <= end) {
			n, scheduled = n+1, scheduled+b.Scheduled
			last[b.Producer], count[b.Producer] = max(last[b.Producer], b.Seq), count[b.Producer]+1
		}
	}
	for id, c := range count {
		if c != last[id]+1 {
			t.Errorf("%s step %d: the stream holds %d batches of %s, numbered up to %d: some were lost", r.Run, r.Step, c, id, last[id])
		}
	}
	if r.Batches != n || r.Scheduled != scheduled {
		t.Errorf("%s step %d result: %d batches, %d scheduled; the stream holds %d of the fleet's batches, %d scheduled",
			r.Run, r.Step, r.Batches, r.Scheduled, n, scheduled)
	}
}

// awaitSettled waits until the aggregator's durable consumer has every
// stored batch delivered and acknowledged: no step is open any more, so no
// further result can come.
func (f *faultFleet) awaitSettled(t *testing.T, within time.Duration) {
	t.Helper()
	testkit.WaitFor(t, within, "the aggregator to acknowledge every batch", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, err := f.js.Consumer(ctx, messages.SamplesStream, "imapload-aggregator")
		if err != nil {
			return false
		}
		i, err := c.Info(ctx)
		return err == nil && i.NumPending == 0 && i.NumAckPending == 0
	})
}

// checkOnce checks that each of steps 1..n of run has exactly one result in
// the stream, revision 0, and that it pooled the stream's batches once.
func (f *faultFleet) checkOnce(t *testing.T, run string, n int) {
	t.Helper()
	all := streamResults(t, f.js, run)
	for step := 1; step <= n; step++ {
		rs := all[step]
		if len(rs) != 1 || rs[0].Revision != 0 {
			t.Errorf("%s step %d: %d results in the stream (revisions %v), want exactly one", run, step, len(rs), revisions(rs))
			continue
		}
		f.checkWhole(t, rs[0])
		t.Logf("%s step %d: %d batches, %d scheduled, %d succeeded, through seq %d", run, step, rs[0].Batches, rs[0].Scheduled, rs[0].Succeeded, rs[0].ThroughSeq)
	}
}

func revisions(rs []messages.StepResult) []int {
	var out []int
	for _, r := range rs {
		out = append(out, r.Revision)
	}
	return out
}
