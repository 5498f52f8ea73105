package aggregator

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/messages"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Aggregator consumes sample batches, pools each step and publishes its
// StepResult once the step is complete or timed out. Create it with New and
// start it with Run.
type Aggregator struct {
	nc   *nats.Conn
	opts *Options
	log  *slog.Logger
	now  func() time.Time

	mu      sync.Mutex // guards everything below; held while handling a message
	js      jetstream.JetStream
	results jetstream.Stream
	open    map[stepKey]*openStep
	closed  map[stepKey]bool // published, or abandoned with nothing to publish
	runs    map[string]bool  // runs whose published results were looked up
}

// New returns an aggregator that will use nc. It does no I/O.
func New(nc *nats.Conn, opts *Options) (*Aggregator, error) {
	if nc == nil {
		return nil, ErrNoConn
	}
	return &Aggregator{
		nc: nc, opts: opts, log: opts.logger(), now: opts.now(),
		open: map[stepKey]*openStep{}, closed: map[stepKey]bool{}, runs: map[string]bool{},
	}, nil
}

// Run ensures the streams, consumes batches with the durable consumer and
// publishes step results until ctx is cancelled; then it stops consuming,
// waits for the message in hand and returns nil. Steps still open stay open
// in the stream (see doc.go): a later Run with the same Durable resumes them.
// Call Run once per Aggregator.
func (a *Aggregator) Run(ctx context.Context) error {
	cons, err := a.setup(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil // cancelled while setting up
		}
		return err
	}
	a.log.Info("aggregator: consuming batches", "stream", messages.SamplesStream,
		"durable", a.opts.durable(), "step_timeout", a.opts.stepTimeout())
	cc, err := cons.Consume(func(m jetstream.Msg) { a.handle(ctx, m) },
		jetstream.PullMaxMessages(64),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			a.log.Warn("aggregator: consuming batches", "err", err)
		}))
	if err != nil {
		return fmt.Errorf("aggregator: consume %s: %w", messages.SamplesStream, err)
	}
	tick := time.NewTicker(a.sweepEvery())
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			cc.Stop()
			<-cc.Closed()
			return nil
		case <-tick.C:
			a.sweep(ctx)
		}
	}
}

func (a *Aggregator) setup(ctx context.Context) (jetstream.Consumer, error) {
	js, err := jetstream.New(a.nc)
	if err != nil {
		return nil, fmt.Errorf("aggregator: jetstream: %w", err)
	}
	if _, err := bus.EnsureSamples(ctx, js, a.opts.busOptions()); err != nil {
		return nil, fmt.Errorf("aggregator: %w", err)
	}
	results, err := bus.EnsureResults(ctx, js, a.opts.busOptions())
	if err != nil {
		return nil, fmt.Errorf("aggregator: %w", err)
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, messages.SamplesStream, jetstream.ConsumerConfig{
		Durable:       a.opts.durable(),
		Description:   "imapload aggregator: pools sample batches into step results",
		FilterSubject: messages.SamplesSubjects,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       a.opts.ackWait(),
		MaxAckPending: 10_000,
	})
	if err != nil {
		return nil, fmt.Errorf("aggregator: durable consumer %q: %w", a.opts.durable(), err)
	}
	a.mu.Lock()
	a.js, a.results = js, results
	a.mu.Unlock()
	return cons, nil
}

// sweepEvery is how often open steps are checked for their deadline.
func (a *Aggregator) sweepEvery() time.Duration {
	return min(max(a.opts.stepTimeout()/10, 20*time.Millisecond), time.Second)
}

// sweep publishes every open step that is finished or past its deadline.
func (a *Aggregator) sweep(ctx context.Context) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	for _, st := range a.open {
		if st.pool.finished() || now.After(st.deadline(a.opts.stepTimeout())) {
			a.close(ctx, st)
		}
	}
}
