package main

import (
	"context"
	"encoding/json"
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
	restarts           int // servers and aggregators started, to name them apart
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
	for i := range max(o.producers, 2) {
		id := fmt.Sprintf("%s-p%d", o.name, i+1)
		args := append([]string{"producer", "--id", id, "--imap", f.imapAddr}, faultProducerArgs...)
		f.ids = append(f.ids, id)
		f.producers = append(f.producers, startProc(t, id, f.env, append(args, o.clientArgs...)...))
	}
	f.startAggregator(t)
	if o.reportOut != "" {
		startProc(t, o.name+"-reporter", f.env, append([]string{"reporter", "--out", o.reportOut}, o.clientArgs...)...)
	}
	awaitProducers(t, f.nc, f.ids...)
	return f
}

// startNATS starts `imapload nats` on the fleet's address and store.
func (f *faultFleet) startNATS(t *testing.T) {
	t.Helper()
	f.restarts++
	args := append([]string{"nats", "--listen", f.natsAddr, "--store", f.store}, f.o.natsArgs...)
	f.natsP = startProc(t, fmt.Sprintf("%s-nats-%d", f.o.name, f.restarts), nil, args...)
	f.natsURL = f.natsP.waitMatch(t, natsURLRe, 30*time.Second)
}

// startIMAP starts `imapload imapserver` on the fleet's address.
func (f *faultFleet) startIMAP(t *testing.T) {
	t.Helper()
	f.restarts++
	f.imapP = startProc(t, fmt.Sprintf("%s-imapserver-%d", f.o.name, f.restarts), nil,
		"imapserver", "--listen", f.imapAddr, "--users", "100")
	f.imapP.waitMatch(t, imapAddrRe, 30*time.Second)
}

// startAggregator starts an aggregator (3 s step timeout) and waits until it
// is ready.
func (f *faultFleet) startAggregator(t *testing.T) {
	t.Helper()
	f.restarts++
	args := append([]string{"aggregator", "--step-timeout", "3s"}, f.o.clientArgs...)
	f.aggP = startProc(t, fmt.Sprintf("%s-aggregator-%d", f.o.name, f.restarts), f.env, args...)
	waitStderr(t, f.aggP, "aggregator: ready", 30*time.Second)
}

// kill sends SIGKILL to p and waits until it has exited.
func kill(t *testing.T, p *proc) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !p.exited() {
		t.Fatalf("SIGKILL %s: %v", p.name, err)
	}
	waitFor(t, 10*time.Second, p.name+" to exit after SIGKILL", p.exited)
}

// acceptedRe is what `imapload step` prints about the producers' answers.
var acceptedRe = regexp.MustCompile(`(\d+) producer\(s\) accepted`)

// step sends a step command with `imapload step` (1 s warm-up, answers
// collected for 2 s) and fails unless every producer of the fleet accepted.
func (f *faultFleet) step(t *testing.T, run string, n int, rate float64, d time.Duration, extra ...string) {
	t.Helper()
	args := []string{"step", "--run", run, "--step", strconv.Itoa(n), "--rate", fmt.Sprint(rate),
		"--duration", d.String(), "--warmup", "1s", "--wait", "2s"}
	out := runProc(t, f.env, append(append(args, f.o.clientArgs...), extra...)...)
	if m := acceptedRe.FindStringSubmatch(out); m == nil || m[1] != strconv.Itoa(len(f.ids)) {
		t.Fatalf("imapload step printed:\n%s\nwant %d producer(s) accepted", out, len(f.ids))
	}
}

// streamResults reads every StepResult of run stored in IMAPLOAD_RESULTS,
// per step in the order stored.
func streamResults(t *testing.T, js jetstream.JetStream, run string) map[int][]messages.StepResult {
	t.Helper()
	out := map[int][]messages.StepResult{}
	for _, m := range streamRead(t, js, messages.ResultsStream, messages.ResultsSubject(run)) {
		var r messages.StepResult
		if json.Unmarshal(m.Data(), &r) == nil && r.Kind == messages.KindStepResult {
			out[r.Step] = append(out[r.Step], r)
		}
	}
	return out
}

// latest waits until step n of run has a result in the stream that passes
// ok (nil: any), and returns its highest revision; the failure shows the
// last one seen.
func latest(t *testing.T, js jetstream.JetStream, run string, n int, within time.Duration, ok func(messages.StepResult) bool) messages.StepResult {
	t.Helper()
	var r messages.StepResult
	for deadline := time.Now().Add(within); ; time.Sleep(250 * time.Millisecond) {
		rs := streamResults(t, js, run)[n]
		for i, x := range rs {
			if i == 0 || x.Revision > r.Revision {
				r = x
			}
		}
		if len(rs) > 0 && (ok == nil || ok(r)) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for a result of %s step %d; %d in the stream, the latest: revision %d, complete %v, producers %v, missing %v, lost %d",
				within, run, n, len(rs), r.Revision, r.Complete, r.Producers, r.Missing, r.Lost)
		}
	}
}

// complete is a result from every producer that sent anything.
func complete(r messages.StepResult) bool { return r.Complete && len(r.Missing) == 0 }

// streamBatches reads every batch of run's step stored in IMAPLOAD_SAMPLES,
// one per (producer, seq), and counts what did not decode.
func streamBatches(t *testing.T, js jetstream.JetStream, run string, step int) (map[string]*messages.SampleBatch, int) {
	t.Helper()
	out, bad := map[string]*messages.SampleBatch{}, 0
	for _, m := range streamRead(t, js, messages.SamplesStream, messages.StepSamplesFilter(run, step)) {
		b, err := messages.DecodeBatch(m.Data())
		if err != nil {
			bad++
			continue
		}
		out[b.Producer+"#"+strconv.FormatUint(b.Seq, 10)] = b
	}
	return out, bad
}

// streamRead returns every message of stream on subject, read with an
// ephemeral consumer deleted after; nil while the stream is unreachable.
func streamRead(t *testing.T, js jetstream.JetStream, stream, subject string) []jetstream.Msg {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return nil
	}
	c, err := s.CreateConsumer(ctx, jetstream.ConsumerConfig{FilterSubject: subject, AckPolicy: jetstream.AckNonePolicy, InactiveThreshold: 10 * time.Second})
	if err != nil {
		return nil
	}
	defer func() { _ = s.DeleteConsumer(ctx, c.CachedInfo().Name) }()
	var out []jetstream.Msg
	for pending := c.CachedInfo().NumPending; uint64(len(out)) < pending; {
		batch, err := c.Fetch(int(min(pending-uint64(len(out)), 1000)), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return out
		}
		n := len(out)
		for m := range batch.Messages() {
			out = append(out, m)
		}
		if len(out) == n {
			t.Logf("reading %s %s: %d of %d messages: %v", stream, subject, n, pending, batch.Error())
			return out
		}
	}
	return out
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
	waitFor(t, within, "the aggregator to acknowledge every batch", func() bool {
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

// forgeBatches publishes batches as fast as the stream takes them, each with
// its message id, and returns how many and their bytes.
func (f *faultFleet) forgeBatches(t *testing.T, batches func(yield func(*messages.SampleBatch) bool)) (n, size int) {
	t.Helper()
	js := f.asyncJS(t)
	for b := range batches {
		data, err := messages.EncodeBatch(b)
		if err != nil {
			t.Fatalf("EncodeBatch: %v", err)
		}
		f.forgeRaw(t, js, messages.SamplesSubject(b.Run, b.Step, b.Producer), data, messages.BatchMsgID(b.Run, b.Step, b.Producer, b.Seq))
		n, size = n+1, size+len(data)
	}
	f.awaitStored(t, js, n)
	return n, size
}

// forgeEncoded publishes encoded batches of run's steps (seq 0 of producer
// each) as fast as the stream takes them, and returns their bytes.
func (f *faultFleet) forgeEncoded(t *testing.T, run, producer string, steps []int, data [][]byte) (size int) {
	t.Helper()
	js := f.asyncJS(t)
	for i, step := range steps {
		f.forgeRaw(t, js, messages.SamplesSubject(run, step, producer), data[i], messages.BatchMsgID(run, step, producer, 0))
		size += len(data[i])
	}
	f.awaitStored(t, js, len(steps))
	return size
}

func (f *faultFleet) asyncJS(t *testing.T) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(f.nc, jetstream.WithPublishAsyncMaxPending(256))
	if err != nil {
		t.Fatalf("jetstream.New: %v", err)
	}
	return js
}

// awaitStored waits until js has every async publish acknowledged.
func (f *faultFleet) awaitStored(t *testing.T, js jetstream.JetStream, n int) {
	t.Helper()
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(2 * time.Minute):
		t.Fatalf("%d forged messages not stored within 2 minutes", n)
	}
}

// forgeRaw publishes data on subject with an async ack, as anyone allowed to
// publish on imapload.samples.> can.
func (f *faultFleet) forgeRaw(t *testing.T, js jetstream.JetStream, subject string, data []byte, id string) {
	t.Helper()
	m := nats.NewMsg(subject)
	m.Data = data
	if _, err := js.PublishMsgAsync(m, jetstream.WithMsgID(id)); err != nil {
		t.Fatalf("PublishMsgAsync(%s): %v", subject, err)
	}
}

// stepEnd is when the last final batch of run's step was stored (the
// stream's clock): the step's end as the aggregator sees it.
func stepEnd(t *testing.T, js jetstream.JetStream, run string, step int) time.Time {
	t.Helper()
	var end time.Time
	for _, m := range streamRead(t, js, messages.SamplesStream, messages.StepSamplesFilter(run, step)) {
		b, err := messages.DecodeBatch(m.Data())
		md, mdErr := m.Metadata()
		if err == nil && mdErr == nil && b.Final && md.Timestamp.After(end) {
			end = md.Timestamp
		}
	}
	return end
}
