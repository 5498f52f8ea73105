package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
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
// step's result is published; bad ones are terminated at once.
func (a *Aggregator) handle(ctx context.Context, m jetstream.Msg) {
	k, ok := parseSubject(m.Subject())
	if !ok {
		a.warn.warn("aggregator: message on an unexpected subject, terminated", "subject", m.Subject())
		a.settle(m.Term())
		return
	}
	md, err := m.Metadata()
	if err != nil { // not a JetStream message: nothing to pool, nothing to ack
		a.warn.warn("aggregator: message without JetStream metadata, dropped", "subject", m.Subject(), "err", err)
		return
	}
	if ctx.Err() != nil {
		return // shutting down: the stream redelivers it to the next run
	}
	st := a.open[k]
	if st == nil {
		if st = a.openFor(ctx, k, m, md); st == nil {
			return // settled by openFor
		}
	}
	a.keep(st, m, md)
	if st.pool.finished() {
		a.close(ctx, st)
	}
}

// openFor opens step k for m, by replaying the step's batches from the
// stream. It returns nil, having settled m, when m cannot open it: its step
// has no command, is already published, or m disagrees with the command;
// or when there is no room among the open steps yet.
func (a *Aggregator) openFor(ctx context.Context, k stepKey, m jetstream.Msg, md *jetstream.MsgMetadata) *openStep {
	cmd, ok := a.cmds.get(k)
	if !ok {
		a.noCommand(ctx, k, m, md)
		return nil
	}
	if err := a.loadRun(ctx, k.run); err != nil {
		return a.retry(m, "aggregator: cannot look up the published results, will retry", k, err)
	}
	prev, late := a.isLate(k, md.Sequence.Stream)
	if _, done := a.closed[k]; done && !late {
		a.log.Debug("aggregator: batch for a step already published", "subject", m.Subject())
		a.settle(m.Ack())
		return nil
	}
	if err := precheck(cmd, m.Subject(), m.Data()); err != nil {
		a.refuse(k, m, md, err)
		return nil
	}
	if len(a.open) >= a.opts.maxOpenSteps() {
		return a.retry(m, "aggregator: too many open steps, batch delayed", k, nil)
	}
	var st *openStep
	var err error
	if late {
		st, err = a.reopen(ctx, cmd, prev)
	} else {
		st, err = a.replay(ctx, cmd)
	}
	if err != nil {
		return a.retry(m, "aggregator: cannot load step, will retry", k, err)
	}
	a.open[k] = st
	return st
}

// retry warns and NAKs m, to be redelivered in a second.
func (a *Aggregator) retry(m jetstream.Msg, msg string, k stepKey, err error) *openStep {
	a.warn.warn(msg, "run", k.run, "step", k.step, "err", err)
	a.settle(m.NakWithDelay(time.Second))
	return nil
}

// noCommand settles a batch whose step has no command. While the command
// may still be on its way to the book, the batch is NAK'd and redelivered
// shortly, a few times; then it is rejected.
func (a *Aggregator) noCommand(ctx context.Context, k stepKey, m jetstream.Msg, md *jetstream.MsgMetadata) {
	if md.NumDelivered < commandTries && !a.commandsCover(ctx, md.Timestamp) {
		a.settle(m.NakWithDelay(commandDelay))
		return
	}
	a.refuse(k, m, md, reject(ReasonNoCommand, "run %s step %d", k.run, k.step))
}

// refuse terminates a bad message, with a warning of its kind.
func (a *Aggregator) refuse(k stepKey, m jetstream.Msg, md *jetstream.MsgMetadata, err error) {
	msg := "aggregator: corrupt batch counted and terminated"
	if r := RejectReason(err); r != "" {
		msg = "aggregator: batch rejected: " + r
	}
	a.warn.warn(msg, "run", k.run, "step", k.step, "subject", m.Subject(), "stream_seq", md.Sequence.Stream, "err", err)
	a.settle(m.Term())
}

// keep absorbs m into st, then terminates, holds or acknowledges it.
func (a *Aggregator) keep(st *openStep, m jetstream.Msg, md *jetstream.MsgMetadata) {
	seq := md.Sequence.Stream
	bad, err := st.absorb(seq, md.Timestamp, m.Subject(), msgID(m), m.Data())
	switch {
	case bad:
		a.refuse(st.key, m, md, err)
	case st.anchor == nil || st.anchorSeq == seq:
		st.anchor, st.anchorSeq = m, seq // held (or redelivered) until the step is published
	default:
		a.settle(m.Ack())
	}
}

// settle logs a failed acknowledgement (ack, NAK or term) as a warning, at
// most a few a minute: the batch will be redelivered, and a stream of them
// means the aggregator is losing its consumer.
func (a *Aggregator) settle(err error) {
	if err != nil {
		a.warn.warn("aggregator: acknowledging a batch failed; it will be redelivered", "err", err)
	}
}

// close publishes st's result and forgets the step. When publishing fails
// the step stays open and the next sweep tries again.
func (a *Aggregator) close(ctx context.Context, st *openStep) {
	if st.pool.totals.batches == 0 { // not closed: a valid batch may open it again
		a.warn.warn("aggregator: step had no valid batch, nothing to publish",
			"run", st.key.run, "step", st.key.step, "corrupt", st.pool.totals.corrupt)
		a.drop(st)
		return
	}
	if st.unchanged() {
		a.log.Info("aggregator: re-opened step pooled nothing new, its result stands",
			"run", st.key.run, "step", st.key.step, "revision", st.prev.revision)
		a.closed[st.key] = published{revision: st.prev.revision, through: st.through(), batches: st.prev.batches}
		a.drop(st)
		return
	}
	server, ready := a.serverFor(ctx, st)
	if !ready {
		return // the next sweep looks again
	}
	r := st.pool.Result()
	r.Server = server
	r.Generated, r.Revision, r.ThroughSeq = a.now().UTC(), st.revision(), st.through()
	if err := a.publish(ctx, &r); err != nil {
		a.log.Warn("aggregator: publishing step result, will retry", "run", r.Run, "step", r.Step, "err", err)
		return
	}
	a.log.Info("aggregator: step result published", "run", r.Run, "step", r.Step, "revision", r.Revision,
		"producers", len(r.Producers), "missing", len(r.Missing), "delivered_rate", r.DeliveredRate, "ratio", r.Ratio,
		"rejected", st.pool.Rejected())
	a.closed[st.key] = publishedOf(&r)
	a.drop(st)
	a.opts.onResult()(&r)
}

// drop forgets an open step, and with it every reference to its batches.
func (a *Aggregator) drop(st *openStep) {
	if st.anchor != nil {
		a.settle(st.anchor.Ack())
	}
	delete(a.open, st.key)
}

func (a *Aggregator) publish(ctx context.Context, r *messages.StepResult) error {
	data, err := json.Marshal(r.Rounded())
	if err != nil {
		return fmt.Errorf("aggregator: encode result: %w", err)
	}
	msg := nats.NewMsg(messages.ResultsSubject(r.Run))
	msg.Header.Set(bus.ContentType, bus.JSONType)
	msg.Header.Set(messages.SummaryHeader, r.Summary())
	msg.Data = data
	ctx, cancel := context.WithTimeout(ctx, ioTimeout)
	defer cancel()
	ack, err := a.js.PublishMsg(ctx, msg, jetstream.WithMsgID(messages.ResultMsgID(r.Run, r.Step, r.Revision)))
	if err != nil {
		return fmt.Errorf("aggregator: publish result: %w", err)
	}
	if ack.Duplicate {
		a.log.Info("aggregator: step result was already in the stream", "run", r.Run, "step", r.Step)
	}
	return nil
}
