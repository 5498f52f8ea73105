package producer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/messages"
)

// Publishing limits.
const (
	ackWait        = 5 * time.Second // one attempt's wait for the stream's ack
	publishBackoff = 100 * time.Millisecond
	publishCap     = 2 * time.Second
	publishQueue   = 64                     // batches cut but not yet published
	maxUnacked     = 64                     // batches kept for another try, at most
	probeWait      = 250 * time.Millisecond // an attempt's wait for its ack once the budget is spent
)

// errDisconnected is an attempt not made: the connection is down, and a
// publish now would only pile up in the client's reconnect buffer.
var errDisconnected = errors.New("producer: NATS connection down; not sent")

// publisher publishes one step's batches in order, each with its message id
// so that a retry is stored once (bus.DedupeWindow, 10 min).
//
// Batches are sent without waiting for their acks: the acks of those in
// flight are looked at before each later batch and waited for before the
// final one, so a slow ack never holds back the next batch.
//
// A batch is counted lost only when it was never acknowledged. A batch not
// acknowledged in time (its ack timed out, so it may be stored all the same,
// or NATS was down) is kept in unacked and published again with the same id
// before each later batch; before the final batch the unacked ones are tried
// until the retry budget is spent, and only those still unacknowledged then
// are counted lost, in the final batch's Health.Lost. Lost batches are logged.
//
// The retry budget is per outage: from the first failed attempt until an ack
// comes, the publisher waits and retries for at most retryFor in all,
// whatever the number of batches; after that each batch gets one attempt
// together with the unacked ones, waiting probeWait for their acks. Nothing
// is sent while the connection is down, so that no copy piles up in the
// client's reconnect buffer to be stored after the batch was given up.
//
// Bound: every wait is under the context given to run. With the NATS
// connection down, the publisher waits at most retryFor + ackWait, however
// many batches are queued. Once its context ends (the step gives it
// shutdownGrace after the producer is told to stop), nothing waits any more:
// the batches still queued are counted lost without a send, and the ones in
// flight or unacked are counted lost at once.
type publisher struct {
	js       jetstream.JetStream
	log      *slog.Logger
	retryFor time.Duration
	in       chan *messages.SampleBatch
	rng      *rand.Rand
	lost     uint64      // lost for sure and not yet carried by a batch
	unacked  []*outgoing // not acknowledged yet, in order; kept for another try
	inflight []flight    // sent, ack not in yet: batches are not waited for one by one
	since    time.Time   // when the current outage began; zero while acks come
	instance string      // the process's instance, in every message id
}

// flight is a batch sent whose ack has not been looked at yet.
type flight struct {
	o    *outgoing
	f    jetstream.PubAckFuture
	sent time.Time
}

// outgoing is one encoded batch on its way.
type outgoing struct {
	msg     *nats.Msg
	id      string
	seq     uint64
	carried uint64 // the lost count it carries (its Health.Lost)
	maybe   bool   // an attempt ended without an answer: it may be stored
}

func newPublisher(js jetstream.JetStream, log *slog.Logger, retryFor time.Duration, seed uint64) *publisher {
	return &publisher{
		js: js, log: log, retryFor: retryFor,
		in:  make(chan *messages.SampleBatch, publishQueue),
		rng: rand.New(rand.NewPCG(seed, 0x707562)),
	}
}

// run publishes batches until in is closed. Once ctx ends, the batches
// still queued are not sent: they are counted lost, in one log line.
func (p *publisher) run(ctx context.Context) {
	var unsent uint64
	for b := range p.in {
		if ctx.Err() == nil {
			p.ship(ctx, b)
			continue
		}
		p.lost += b.Health.Lost + 1
		unsent++
	}
	p.reap(ctx, true)
	p.settle(ctx) // unacked ones left by a context that ended mid-retry
	if unsent > 0 {
		p.log.Error("producer: sample batches not sent: the time to publish them ran out as the producer stopped",
			"batches", unsent, "lost", p.lost, "err", context.Cause(ctx))
	}
}

// ship publishes b carrying the count of batches lost before it. A batch
// other than the final one is sent without waiting for its ack: the acks of
// the batches in flight are looked at before each later batch, and waited
// for before the final one. Unacked batches are tried again first: once
// before a batch, and for the rest of the budget before the final one. Once
// the budget is spent, b joins them and they all get one attempt together.
func (p *publisher) ship(ctx context.Context, b *messages.SampleBatch) {
	p.reap(ctx, b.Final)
	if b.Final {
		p.settle(ctx)
	}
	b.Health.Lost += p.lost
	p.lost = 0
	o, err := p.encode(b)
	if err != nil {
		p.lose(b.Seq, b.Health.Lost, b.Final, err)
		o = nil
	}
	if !b.Final && (p.spent() || len(p.unacked) > 0) {
		if o != nil && p.spent() {
			p.keepUnacked(o, errors.New("outage past its retry budget"))
			o = nil
		}
		p.resend(ctx)
	}
	switch {
	case o == nil:
	case !b.Final:
		p.launch(o)
	default:
		if err := p.publish(ctx, o); err != nil {
			p.lose(b.Seq, b.Health.Lost, b.Final, err)
		}
	}
}

// launch sends o and leaves its ack in flight; an o that cannot be sent is
// kept unacked.
func (p *publisher) launch(o *outgoing) {
	now := time.Now()
	f, err := p.send(o)
	if err != nil {
		if p.since.IsZero() {
			p.since = now
		}
		p.keepUnacked(o, err)
		return
	}
	p.inflight = append(p.inflight, flight{o: o, f: f, sent: now})
}

// reap looks at the acks of the batches in flight: an acknowledged one is
// done, a failed one is kept unacked. With all, or when more than maxUnacked
// are in flight, it waits for them, each at most its ackWait from its send.
func (p *publisher) reap(ctx context.Context, all bool) {
	all = all || len(p.inflight) > maxUnacked
	still := p.inflight[:0]
	for _, fl := range p.inflight {
		done, err := answer(fl.f)
		if !done && all {
			done, err = true, p.await(ctx, fl.f, ackWait-time.Since(fl.sent))
		}
		switch {
		case !done:
			still = append(still, fl)
		case err == nil:
			p.since = time.Time{}
		default:
			fl.o.maybe = fl.o.maybe || !answered(err)
			if p.since.IsZero() {
				p.since = fl.sent
			}
			p.keepUnacked(fl.o, err)
		}
	}
	clear(p.inflight[len(still):])
	p.inflight = still
}

// answer reports whether f has its outcome, and the outcome, without
// waiting.
func answer(f jetstream.PubAckFuture) (bool, error) {
	select {
	case <-f.Ok():
		return true, nil
	case err := <-f.Err():
		return true, err
	default:
		return false, nil
	}
}

// spent reports whether the current outage has used up the retry budget.
func (p *publisher) spent() bool {
	return !p.since.IsZero() && time.Since(p.since) >= p.retryFor
}

// lose counts a batch as lost, with the count it carried, into the next
// batch shipped (none after a final one).
func (p *publisher) lose(seq, carried uint64, final bool, err error) {
	p.lost += carried + 1
	p.log.Error("producer: sample batch lost; counted in the next batch shipped", "seq", seq, "final", final,
		"lost", p.lost, "err", err)
}

// encode makes b's message, with its id.
func (p *publisher) encode(b *messages.SampleBatch) (*outgoing, error) {
	data, err := messages.EncodeBatch(b)
	if err != nil { // a bug of ours: the recorder made a batch the contract refuses
		p.log.Error("producer: BUG: cannot encode sample batch", "run", b.Run, "step", b.Step, "seq", b.Seq, "err", err)
		return nil, err
	}
	msg := nats.NewMsg(messages.SamplesSubject(b.Run, b.Step, b.Producer))
	msg.Header.Set(bus.ContentType, bus.MsgpackType)
	msg.Data = data
	return &outgoing{msg: msg, id: messages.InstanceBatchMsgID(b.Run, b.Step, b.Producer, p.instance, b.Seq),
		seq: b.Seq, carried: b.Health.Lost}, nil
}

// publish tries o until it is acknowledged or the outage budget is spent.
func (p *publisher) publish(ctx context.Context, o *outgoing) error {
	for attempt := 0; ; attempt++ {
		start := time.Now()
		err := p.try(ctx, o, p.ackLimit(start))
		if err == nil {
			p.since = time.Time{}
			return nil
		}
		if p.since.IsZero() {
			p.since = start
		}
		left := time.Until(p.since.Add(p.retryFor))
		if left <= 0 || ctx.Err() != nil {
			return err
		}
		p.log.Warn("producer: publish failed; retrying", "msg_id", o.id, "attempt", attempt+1, "err", err)
		if !sleepCtx(ctx, min(left, backoff(attempt, publishBackoff, publishCap, p.rng.Float64()))) {
			return ctx.Err()
		}
	}
}

// ackLimit is how long an attempt starting at start may wait for its ack:
// ackWait while the stream answers, the rest of the budget during an outage
// and probeWait once it is spent.
func (p *publisher) ackLimit(start time.Time) time.Duration {
	if p.since.IsZero() {
		return ackWait
	}
	return min(ackWait, max(probeWait, p.since.Add(p.retryFor).Sub(start)))
}

// try is one asynchronous publish and the wait, at most wait, for its ack.
// An attempt that ends without an answer marks o as maybe stored.
func (p *publisher) try(ctx context.Context, o *outgoing, wait time.Duration) error {
	f, err := p.send(o)
	if err != nil {
		return err
	}
	err = p.await(ctx, f, wait)
	o.maybe = o.maybe || (err != nil && !answered(err))
	return err
}

// send publishes o asynchronously, if the connection is up.
func (p *publisher) send(o *outgoing) (jetstream.PubAckFuture, error) {
	if !p.js.Conn().IsConnected() {
		return nil, errDisconnected
	}
	return p.js.PublishMsgAsync(o.msg, jetstream.WithMsgID(o.id)) // an error means nothing was written
}

// keepUnacked keeps o for another try; past maxUnacked one is given up: the
// oldest never sent if any (it cannot be stored), else the oldest.
func (p *publisher) keepUnacked(o *outgoing, err error) {
	p.log.Warn("producer: sample batch not acknowledged yet; kept to retry with its message id",
		"seq", o.seq, "maybe_stored", o.maybe, "unacked", len(p.unacked)+1, "err", err)
	p.unacked = append(p.unacked, o)
	if len(p.unacked) <= maxUnacked {
		return
	}
	i := slices.IndexFunc(p.unacked, func(o *outgoing) bool { return !o.maybe })
	i = max(i, 0)
	old := p.unacked[i]
	p.unacked = slices.Delete(p.unacked, i, i+1)
	p.lose(old.seq, old.carried, false, fmt.Errorf("more than %d batches unacknowledged (maybe stored: %v)", maxUnacked, old.maybe))
}

// settle tries the unacked batches again until they are acknowledged or the
// budget is spent (one round if it already is), then counts the rest lost.
func (p *publisher) settle(ctx context.Context) {
	for attempt := 0; len(p.unacked) > 0; attempt++ {
		p.resend(ctx)
		left := time.Until(p.since.Add(p.retryFor))
		if len(p.unacked) == 0 || p.since.IsZero() || left <= 0 ||
			!sleepCtx(ctx, min(left, backoff(attempt, publishBackoff, publishCap, p.rng.Float64()))) {
			break
		}
	}
	for _, o := range p.unacked {
		p.lose(o.seq, o.carried, false, errors.New("not acknowledged within the retry budget"))
	}
	p.unacked = nil
}

// resend publishes every unacked batch once, all at once, and waits for their
// acks together; the acknowledged ones are no longer unacked.
func (p *publisher) resend(ctx context.Context) {
	start := time.Now()
	wait := p.ackLimit(start)
	fs := make([]jetstream.PubAckFuture, len(p.unacked))
	for i, o := range p.unacked {
		fs[i], _ = p.send(o) // a failed send stays unacked
	}
	var still []*outgoing
	for i, o := range p.unacked {
		if fs[i] == nil {
			still = append(still, o)
		} else if err := p.await(ctx, fs[i], wait-time.Since(start)); err != nil {
			o.maybe = o.maybe || !answered(err)
			still = append(still, o)
		}
	}
	switch {
	case len(still) < len(p.unacked):
		p.since = time.Time{} // acks came: the stream is back
		p.log.Info("producer: unacked sample batches acknowledged after all", "acked", len(p.unacked)-len(still))
	case p.since.IsZero():
		p.since = start
	}
	p.unacked = still
}

// await waits for f's ack, at most wait.
func (p *publisher) await(ctx context.Context, f jetstream.PubAckFuture, wait time.Duration) error {
	timer := time.NewTimer(max(wait, 0))
	defer timer.Stop()
	select {
	case <-f.Ok():
		return nil
	case err := <-f.Err():
		return err
	case <-timer.C:
		return fmt.Errorf("%w: no ack within %v", jetstream.ErrAsyncPublishTimeout, wait)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// answered reports whether err is the stream's answer, which means the
// message was not stored (no ack timed out, nothing is in doubt).
func answered(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, errDisconnected) || errors.As(err, &apiErr)
}

// sleepCtx waits d or until ctx ends, and reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
