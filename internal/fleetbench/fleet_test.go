package fleetbench

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/internal/testkit/natstest"
	"github.com/imapload/imapload/messages"
)

// replyWait bounds the wait for the producers' answers to a step request.
const replyWait = 10 * time.Second

// fleet is one set-up: the NATS server, the operator's connection (the
// ramp's part), the aggregator's process and n simulated producers.
type fleet struct {
	n     int
	nc    *nats.Conn
	kv    jetstream.KeyValue
	agg   *aggProc
	prods []*simProducer
}

// stepSpec is the step each iteration runs.
type stepSpec struct {
	rate   float64 // commands/s offered by each producer
	warmup time.Duration
	window time.Duration
}

// figures are what one step measured.
type figures struct {
	list    time.Duration // listing the registry's n entries, as the ramp counts the fleet
	gather  time.Duration // from the step request to its n-th answer
	result  time.Duration // from the last final batch's ack to the step result
	sent    tally         // summed over the producers (finalAck: the last one)
	lost    uint64        // batches sent and not pooled, or never acknowledged
	pooled  uint64        // batches the result pooled
	size    int           // the result's JSON, bytes
	elapsed time.Duration // the step, from the request to the last producer's end
}

// startFleet starts everything for n producers; tb's cleanup stops it in
// reverse order. It does I/O and fails tb on error.
func startFleet(tb testing.TB, n int) *fleet {
	tb.Helper()
	ns, nc := natstest.Start(tb)
	js, err := jetstream.New(nc)
	if err != nil {
		tb.Fatalf("jetstream.New() error = %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := &fleet{n: n, nc: nc}
	if _, err := bus.EnsureSteps(ctx, js, nil); err != nil { // as the ramp does, so the command is kept
		tb.Fatalf("bus.EnsureSteps() error = %v", err)
	}
	if f.kv, err = bus.EnsureProducers(ctx, js, nil); err != nil {
		tb.Fatalf("bus.EnsureProducers() error = %v", err)
	}
	f.agg = startAggregator(tb, ns.ClientURL(), js)
	pctx, stop := context.WithCancel(context.Background())
	tb.Cleanup(func() {
		stop()
		for _, p := range f.prods {
			p.close()
		}
	})
	for i := range n {
		p, err := startProducer(pctx, ns.ClientURL(), fmt.Sprintf("fb-%03d", i))
		if err != nil {
			tb.Fatalf("startProducer() error = %v", err)
		}
		f.prods = append(f.prods, p)
	}
	return f
}

// step runs one step of run and measures it. A batch lost, a producer
// missing or a count that differs fails tb, after the figures are taken.
func (f *fleet) step(tb testing.TB, run string, step int, spec stepSpec) figures {
	tb.Helper()
	var fig figures
	ctx, cancel := context.WithTimeout(context.Background(), spec.warmup+spec.window+time.Minute)
	defer cancel()
	fig.list = f.countLive(ctx, tb)
	results, err := f.nc.SubscribeSync(messages.ResultsSubject(run))
	if err != nil {
		tb.Fatalf("SubscribeSync(%s) error = %v", messages.ResultsSubject(run), err)
	}
	defer results.Unsubscribe()
	warmup := messages.Duration(spec.warmup)
	cmd := messages.StepCommand{Run: run, Step: step, Rate: spec.rate * float64(f.n),
		Duration: messages.Duration(spec.window), Warmup: &warmup, Producers: f.n}
	start := time.Now()
	fig.gather = f.request(tb, cmd)
	r, size, at := awaitResult(ctx, tb, results, step)
	for _, p := range f.prods {
		p.steps.Wait()
	}
	fig.elapsed = time.Since(start)
	f.sum(&fig)
	fig.result = at.Sub(fig.sent.finalAck)
	fig.pooled, fig.size = r.Batches, size
	fig.lost = fig.sent.lost + fig.sent.batches - min(fig.sent.batches, r.Batches)
	f.check(tb, r, fig)
	return fig
}

// countLive lists the registry's keys, as the ramp counts the fleet, and
// returns how long it took.
func (f *fleet) countLive(ctx context.Context, tb testing.TB) time.Duration {
	tb.Helper()
	start := time.Now()
	keys, err := f.kv.Keys(ctx)
	took := time.Since(start)
	if err != nil || len(keys) != f.n {
		tb.Fatalf("registry Keys() = %d keys, %v; want %d", len(keys), err, f.n)
	}
	return took
}

// request sends cmd as a request on the step subject, as the ramp does
// (the steps stream keeps it), and gathers the answers until all n are in;
// it returns how long that took.
func (f *fleet) request(tb testing.TB, cmd messages.StepCommand) time.Duration {
	tb.Helper()
	body, err := json.Marshal(cmd)
	if err != nil {
		tb.Fatal(err)
	}
	inbox := f.nc.NewRespInbox()
	sub, err := f.nc.SubscribeSync(inbox)
	if err != nil {
		tb.Fatalf("SubscribeSync(inbox) error = %v", err)
	}
	defer sub.Unsubscribe()
	start := time.Now()
	if err := f.nc.PublishRequest(messages.StepSubject, inbox, body); err != nil {
		tb.Fatalf("PublishRequest(%s) error = %v", messages.StepSubject, err)
	}
	accepted := 0
	for deadline := start.Add(replyWait); accepted < f.n; {
		m, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			tb.Fatalf("step request: %d of %d producers accepted within %v (%v)", accepted, f.n, replyWait, err)
		}
		if r, err := messages.DecodeStepReply(m.Data); err == nil && r.Accepted {
			accepted++
		}
	}
	return time.Since(start)
}

// awaitResult returns step's result as it arrives on results, its size and
// when it came.
func awaitResult(ctx context.Context, tb testing.TB, results *nats.Subscription, step int) (messages.StepResult, int, time.Time) {
	tb.Helper()
	for {
		m, err := results.NextMsgWithContext(ctx)
		if err != nil {
			tb.Fatalf("no result of step %d: %v", step, err)
		}
		at := time.Now()
		if r, err := messages.DecodeResult(m.Data); err == nil && r.Kind == messages.KindStepResult && r.Step == step {
			return *r, len(m.Data), at
		}
	}
}

// sum adds up what the producers sent into fig.sent.
func (f *fleet) sum(fig *figures) {
	for _, p := range f.prods {
		t := p.sent()
		fig.sent.batches += t.batches
		fig.sent.lost += t.lost
		fig.sent.bytes += t.bytes
		fig.sent.inWindow += t.inWindow
		fig.sent.winBytes += t.winBytes
		fig.sent.scheduled += t.scheduled
		if t.finalAck.After(fig.sent.finalAck) {
			fig.sent.finalAck = t.finalAck
		}
	}
}

// check fails tb unless the result pooled every producer and every batch.
func (f *fleet) check(tb testing.TB, r messages.StepResult, fig figures) {
	tb.Helper()
	if fig.lost != 0 || r.Lost != 0 || r.Corrupt != 0 || len(r.Rejected) != 0 {
		tb.Errorf("step %d: %d batches sent, %d pooled, %d never acknowledged; result lost %d, corrupt %d, rejected %v",
			r.Step, fig.sent.batches, r.Batches, fig.sent.lost, r.Lost, r.Corrupt, r.Rejected)
	}
	if len(r.Producers) != f.n || len(r.Missing) != 0 || !r.Complete {
		tb.Errorf("step %d result: %d producers, missing %v, complete %v; want %d, none missing, complete",
			r.Step, len(r.Producers), r.Missing, r.Complete, f.n)
	}
	if r.Scheduled != fig.sent.scheduled {
		tb.Errorf("step %d result: scheduled %d, want %d (the producers' batches summed)", r.Step, r.Scheduled, fig.sent.scheduled)
	}
}
