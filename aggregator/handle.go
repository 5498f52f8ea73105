package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/messages"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ioTimeout bounds each round of I/O done while handling one message.
const ioTimeout = 10 * time.Second

// handle pools one delivered batch. Every message is acknowledged after it
// is merged, except one per open step, held as the step's anchor until the
// step's result is published; undecodable ones are terminated.
func (a *Aggregator) handle(ctx context.Context, m jetstream.Msg) {
	k, ok := parseSubject(m.Subject())
	if !ok {
		a.log.Warn("aggregator: message on an unexpected subject, terminated", "subject", m.Subject())
		a.settle(m.Term())
		return
	}
	md, err := m.Metadata()
	if err != nil { // not a JetStream message: nothing to pool, nothing to ack
		a.log.Warn("aggregator: message without JetStream metadata, dropped", "subject", m.Subject(), "err", err)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if ctx.Err() != nil {
		return // shutting down: the stream redelivers it to the next run
	}
	st, err := a.stepFor(ctx, k)
	if err != nil {
		a.log.Warn("aggregator: cannot load step, will retry", "run", k.run, "step", k.step, "err", err)
		a.settle(m.NakWithDelay(time.Second))
		return
	}
	if st == nil {
		a.log.Debug("aggregator: batch for a step already published", "subject", m.Subject())
		a.settle(m.Ack())
		return
	}
	a.keep(st, m, md)
	if st.pool.finished() {
		a.close(ctx, st)
	}
}

// keep absorbs m into st, then terminates, holds or acknowledges it.
func (a *Aggregator) keep(st *openStep, m jetstream.Msg, md *jetstream.MsgMetadata) {
	seq := md.Sequence.Stream
	corrupt, err := st.absorb(seq, md.Timestamp, m.Subject(), m.Data())
	switch {
	case corrupt:
		a.log.Warn("aggregator: corrupt batch counted and terminated",
			"run", st.key.run, "step", st.key.step, "subject", m.Subject(), "stream_seq", seq, "err", err)
		a.settle(m.Term())
	case st.anchor == nil || st.anchorSeq == seq:
		st.anchor, st.anchorSeq = m, seq // held (or redelivered) until the step is published
	default:
		a.settle(m.Ack())
	}
}

func (a *Aggregator) settle(err error) {
	if err != nil {
		a.log.Debug("aggregator: acknowledging a batch", "err", err)
	}
}

// stepFor returns the open step k, opening it by replaying the step's
// batches from the stream; nil when k was already published.
func (a *Aggregator) stepFor(ctx context.Context, k stepKey) (*openStep, error) {
	if st := a.open[k]; st != nil {
		return st, nil
	}
	if err := a.loadRun(ctx, k.run); err != nil {
		return nil, err
	}
	if a.closed[k] {
		return nil, nil
	}
	st, err := a.replay(ctx, k)
	if err != nil {
		return nil, err
	}
	a.open[k] = st
	return st, nil
}

// close publishes st's result and forgets the step. When publishing fails
// the step stays open and the next sweep tries again.
func (a *Aggregator) close(ctx context.Context, st *openStep) {
	if st.pool.totals.batches == 0 {
		a.log.Warn("aggregator: step had no valid batch, nothing to publish",
			"run", st.key.run, "step", st.key.step, "corrupt", st.pool.totals.corrupt)
		a.forget(st)
		return
	}
	r := st.pool.Result()
	r.Generated = a.now().UTC()
	if err := a.publish(ctx, &r); err != nil {
		a.log.Warn("aggregator: publishing step result, will retry", "run", r.Run, "step", r.Step, "err", err)
		return
	}
	a.log.Info("aggregator: step result published", "run", r.Run, "step", r.Step,
		"producers", len(r.Producers), "missing", len(r.Missing), "delivered_rate", r.DeliveredRate, "ratio", r.Ratio)
	a.forget(st)
}

func (a *Aggregator) forget(st *openStep) {
	if st.anchor != nil {
		a.settle(st.anchor.Ack())
	}
	a.closed[st.key] = true
	delete(a.open, st.key)
}

// ResultMsgID is the JetStream message id of a step's result, so that the
// results stream stores it once.
func ResultMsgID(run string, step int) string {
	return "result-" + run + "-" + strconv.Itoa(step)
}

func (a *Aggregator) publish(ctx context.Context, r *messages.StepResult) error {
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("aggregator: encode result: %w", err)
	}
	msg := nats.NewMsg(messages.ResultsSubject(r.Run))
	msg.Header.Set(bus.ContentType, bus.JSONType)
	msg.Data = data
	ctx, cancel := context.WithTimeout(ctx, ioTimeout)
	defer cancel()
	ack, err := a.js.PublishMsg(ctx, msg, jetstream.WithMsgID(ResultMsgID(r.Run, r.Step)))
	if err != nil {
		return fmt.Errorf("aggregator: publish result: %w", err)
	}
	if ack.Duplicate {
		a.log.Info("aggregator: step result was already in the stream", "run", r.Run, "step", r.Step)
	}
	return nil
}
