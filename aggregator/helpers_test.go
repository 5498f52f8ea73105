package aggregator

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/internal/testkit/natstest"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// testBus is an in-process nats-server with JetStream and a connection to it.
type testBus struct {
	nc *nats.Conn
	js jetstream.JetStream
}

func startBus(t *testing.T) *testBus {
	t.Helper()
	_, nc := natstest.Start(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream.New() error = %v", err)
	}
	ctx := testCtx(t)
	if _, err := bus.EnsureSamples(ctx, js, nil); err != nil {
		t.Fatalf("bus.EnsureSamples() error = %v", err)
	}
	if _, err := bus.EnsureResults(ctx, js, nil); err != nil {
		t.Fatalf("bus.EnsureResults() error = %v", err)
	}
	if _, err := bus.EnsureSteps(ctx, js, nil); err != nil {
		t.Fatalf("bus.EnsureSteps() error = %v", err)
	}
	return &testBus{nc: nc, js: js}
}

// stepCommand is the command stepBatches' steps run under.
func stepCommand(run string, step int) messages.StepCommand {
	zero := messages.Duration(0)
	return messages.StepCommand{Run: run, Step: step, Rate: 100, Duration: messages.Duration(time.Second), Warmup: &zero}
}

// command publishes the command of a step of stepBatches, as an operator
// would, and waits until the steps stream has stored it.
func (tb *testBus) command(t *testing.T, run string, step int) {
	t.Helper()
	tb.commandRaw(t, stepCommand(run, step))
}

func (tb *testBus) commandRaw(t *testing.T, cmd any) {
	t.Helper()
	data, err := json.Marshal(cmd)
	if err != nil {
		t.Fatal(err)
	}
	tb.commandBytes(t, data)
}

// commandBytes publishes data on the step subject and waits until the
// steps stream has stored it.
func (tb *testBus) commandBytes(t *testing.T, data []byte) {
	t.Helper()
	st, err := tb.js.Stream(testCtx(t), bus.StepsStream)
	if err != nil {
		t.Fatal(err)
	}
	before := st.CachedInfo().State.LastSeq
	if err := tb.nc.Publish(messages.StepSubject, data); err != nil {
		t.Fatalf("Publish(%s) error = %v", messages.StepSubject, err)
	}
	testkit.WaitFor(t, 10*time.Second, "the step command stored", func() bool {
		info, err := st.Info(testCtx(t))
		return err == nil && info.State.LastSeq > before
	})
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// publish sends b as a producer would, with msgID ("" means BatchMsgID).
func (tb *testBus) publish(t *testing.T, b *messages.SampleBatch, msgID string) {
	t.Helper()
	data, err := messages.EncodeBatch(b)
	if err != nil {
		t.Fatalf("messages.EncodeBatch() error = %v", err)
	}
	if msgID == "" {
		msgID = messages.BatchMsgID(b.Run, b.Step, b.Producer, b.Seq)
	}
	tb.publishRaw(t, messages.SamplesSubject(b.Run, b.Step, b.Producer), data, msgID)
}

func (tb *testBus) publishRaw(t *testing.T, subject string, data []byte, msgID string) {
	t.Helper()
	m := nats.NewMsg(subject)
	m.Header.Set(bus.ContentType, bus.MsgpackType)
	m.Data = data
	if _, err := tb.js.PublishMsg(testCtx(t), m, jetstream.WithMsgID(msgID)); err != nil {
		t.Fatalf("PublishMsg(%s) error = %v", subject, err)
	}
}

// results reads every message on run's results subject.
func (tb *testBus) results(t *testing.T, run string) []*jetstream.RawStreamMsg {
	t.Helper()
	ctx := testCtx(t)
	st, err := tb.js.Stream(ctx, messages.ResultsStream)
	if err != nil {
		t.Fatalf("Stream(%s) error = %v", messages.ResultsStream, err)
	}
	var out []*jetstream.RawStreamMsg
	for seq := uint64(1); ; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return out
		}
		if err != nil {
			t.Fatalf("GetMsg(%d) error = %v", seq, err)
		}
		if m.Subject == messages.ResultsSubject(run) {
			out = append(out, m)
		}
	}
}

// waitResult polls until run's step has a result and returns it.
func (tb *testBus) waitResult(t *testing.T, run string, step int, within time.Duration) (messages.StepResult, *jetstream.RawStreamMsg) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		for _, m := range tb.results(t, run) {
			var r messages.StepResult
			if err := json.Unmarshal(m.Data, &r); err != nil {
				t.Fatalf("result JSON: %v", err)
			}
			if r.Kind == messages.KindStepResult && r.Step == step {
				return r, m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no result for run %s step %d after %v", run, step, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// consumed reports whether durable has nothing left to deliver and at most
// held messages unacknowledged.
func (tb *testBus) consumed(t *testing.T, durable string, held int) bool {
	t.Helper()
	c, err := tb.js.Consumer(testCtx(t), messages.SamplesStream, durable)
	if err != nil {
		return false
	}
	info, err := c.Info(testCtx(t))
	return err == nil && info.NumPending == 0 && info.NumAckPending <= held
}

// running is an aggregator started by startAgg.
type running struct {
	a      *Aggregator
	cancel context.CancelFunc
	done   chan error
}

func startAgg(t *testing.T, nc *nats.Conn, opts *Options) *running {
	t.Helper()
	a, err := New(nc, opts)
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{a: a, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- a.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop cancels Run and waits for it; calling it again does nothing.
func (r *running) stop(t *testing.T) {
	t.Helper()
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("Aggregator.Run() = %v after cancel, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Aggregator.Run() did not return within 10s of cancel")
	}
}

// stepBatches records a small step: each producer sends batch 0 on
// acceptance, then n batches with fetch and login latencies, the last final.
// Batches come in the order a fleet publishes them: every producer's batch 0,
// then every producer's batch 1, and so on.
func stepBatches(run string, step int, producers []string, n int) []*messages.SampleBatch {
	info := messages.StepInfo{FleetRate: 100, Rate: 100 / float64(len(producers)), Producers: len(producers), Duration: int64(time.Second)}
	var out []*messages.SampleBatch
	for i, id := range producers {
		rec := recorder.New(run, step, id, info, &recorder.Options{Seed: uint64(i + 1), Reservoir: 16})
		out = append(out, rec.Cut(-time.Second, -time.Second, false, messages.Health{}))
		for c := range n {
			for j := range 40 {
				d := time.Duration(1000+37*j*(i+1)+c) * time.Microsecond
				rec.Record(messages.Fetch, d, d/2)
				rec.Scheduled(true)
			}
			rec.Record(messages.Login, 200*time.Microsecond, 150*time.Microsecond)
			rec.Fail(messages.Fetch, errors.New("NO [SERVERBUG] internal error 42"))
			rec.Scheduled(false)
			cut := time.Duration(c) * time.Second / time.Duration(n)
			out = append(out, rec.Cut(cut, cut+time.Second/time.Duration(n), c == n-1, messages.Health{Sessions: 3, CPU: 0.2}))
		}
	}
	slices.SortStableFunc(out, func(a, b *messages.SampleBatch) int { return cmp.Compare(a.Seq, b.Seq) })
	return out
}

// canonical is r as JSON without its Generated stamp.
func canonical(t *testing.T, r messages.StepResult) string {
	t.Helper()
	r.Generated, r.Rejected = time.Time{}, nil // what was pooled, not when or what was refused
	r.ThroughSeq, r.Revision = 0, 0
	r = r.Rounded() // what is published is rounded
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		t.Fatalf("json.Marshal(StepResult) error = %v", err)
	}
	return string(b)
}

// logBuffer is a concurrency-safe slog destination for tests.
type logBuffer struct{ testkit.Buffer }

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func (l *logBuffer) count(s string) int { return strings.Count(l.String(), s) }
