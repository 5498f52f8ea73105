package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/imapload/imapload/aggregator"
	"github.com/imapload/imapload/messages"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// pollEvery is how often the registry and the aggregator's consumer are
// looked at while Run waits.
const pollEvery = 100 * time.Millisecond

// awaitProducers polls the registry until every local producer and the
// expected others are in it, or the wait, ctx or a failed role ends it.
func (p *pipe) awaitProducers(ctx context.Context) error {
	js, err := jetstream.New(p.op)
	if err != nil {
		return err
	}
	want := max(len(p.cfg.local)+p.cfg.ExpectProducers, 1)
	var ids []string
	err = poll(ctx, p.cfg.ProducerWait, func(ctx context.Context) bool {
		ids = registered(ctx, js)
		return len(ids) >= want && containsAll(ids, p.cfg.local)
	})
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %d of %d in %v (registered: %v); start the others with the command printed above, or lower --expect-producers",
			ErrProducers, len(ids), want, p.cfg.ProducerWait, ids)
	}
	return err
}

// poll calls done every pollEvery until it is true, within bound; it
// returns context.DeadlineExceeded when the bound is over first, and ctx's
// cause when ctx ends (a role's failure, an interrupt).
func poll(ctx context.Context, bound time.Duration, done func(context.Context) bool) error {
	pctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for !done(pctx) {
		select {
		case <-pctx.Done():
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			return context.DeadlineExceeded
		case <-tick.C:
		}
	}
	return nil
}

// settleWait bounds the wait for the reporter to report every step.
const settleWait = 10 * time.Second

// settle waits until the reporter has reported every step of results (it
// then writes its files before it stops), within settleWait; a reporter
// that lags longer is stopped anyway, its files one step behind.
func (p *pipe) settle(ctx context.Context, results []messages.StepResult) {
	if p.reporter == nil || len(results) == 0 {
		return
	}
	_ = poll(ctx, settleWait, func(context.Context) bool {
		rep, ok := p.reporter.Report("")
		return ok && reports(rep, results)
	})
}

// reports says whether rep holds every step of results.
func reports(rep messages.RunReport, results []messages.StepResult) bool {
	for _, r := range results {
		if !slices.ContainsFunc(rep.Steps, func(s messages.StepResult) bool { return s.Step == r.Step && s.Revision >= r.Revision }) {
			return false
		}
	}
	return true
}

// registered lists the producer ids in the registry; none when it cannot
// be read (yet).
func registered(ctx context.Context, js jetstream.JetStream) []string {
	kv, err := js.KeyValue(ctx, messages.ProducersBucket)
	if err != nil {
		return nil
	}
	keys, err := kv.Keys(ctx)
	if err != nil {
		return nil
	}
	slices.Sort(keys)
	return keys
}

// containsAll reports whether every local producer's key is among keys.
func containsAll(keys, ids []string) bool {
	for _, id := range ids {
		if !slices.Contains(keys, messages.ProducerKey(id)) {
			return false
		}
	}
	return true
}

// consumingLooks is how many times AggregatorConsuming looks before it
// says no: a running aggregator's pull request may be renewed in between.
const consumingLooks = 3

// AggregatorConsuming reports whether an aggregator consumes the batches on
// nc's NATS: its durable consumer (aggregator.DefaultDurable) exists and
// has a pull request waiting, which a running aggregator always keeps. A
// durable left by a stopped aggregator has none; a new aggregator resumes
// it. It looks a few times, pollEvery apart, before it says no.
func AggregatorConsuming(ctx context.Context, nc *nats.Conn) (bool, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return false, err
	}
	for look := range consumingLooks {
		if look > 0 {
			if err := sleep(ctx, pollEvery); err != nil {
				return false, err
			}
		}
		c, err := js.Consumer(ctx, messages.SamplesStream, aggregator.DefaultDurable)
		switch {
		case errors.Is(err, jetstream.ErrConsumerNotFound), errors.Is(err, jetstream.ErrStreamNotFound):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("pipeline: is an aggregator consuming? %w", err)
		case c.CachedInfo().NumWaiting > 0:
			return true, nil
		}
	}
	return false, nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
