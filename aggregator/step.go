package aggregator

import (
	"errors"
	"fmt"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/nats-io/nats.go/jetstream"
)

// stepKey names a step.
type stepKey struct {
	run  string
	step int
}

// openStep is a step being pooled: its pool, the stream messages already in
// it, and the one message held unacknowledged so that the durable consumer
// remembers the step is open (see doc.go).
type openStep struct {
	key       stepKey
	pool      *Pool
	seen      map[uint64]bool // stream sequence → corrupt
	first     time.Time       // when its earliest pooled batch was stored
	anchor    jetstream.Msg
	anchorSeq uint64
	prev      *published // the published result, when the step was re-opened
	reopened  time.Time  // when it was re-opened
	serverBy  time.Time  // how long it waits for server figures, once ready (server.go)
}

func newOpenStep(cmd messages.StepCommand, opts *PoolOptions) *openStep {
	return &openStep{key: stepKey{cmd.Run, cmd.Step}, pool: NewCommandPool(cmd, opts), seen: map[uint64]bool{}}
}

// parseSubject reads the step from a samples subject (see
// messages.ParseSamplesSubject).
func parseSubject(subject string) (stepKey, bool) {
	run, step, _, ok := messages.ParseSamplesSubject(subject)
	return stepKey{run, step}, ok
}

// absorb pools the message stored at seq, once. It reports whether the
// message is bad, whether or not it was new: corrupt (undecodable, refused
// by the pool as invalid, or not matching its subject; counted in Corrupt)
// or rejected (disagreeing with the step's command; err wraps ErrRejected
// and the pool counts it). A bad message never changes the step.
func (st *openStep) absorb(seq uint64, stored time.Time, subject, msgID string, data []byte) (bad bool, err error) {
	if c, dup := st.seen[seq]; dup {
		return c, nil
	}
	b, err := decodeOn(subject, data)
	if err == nil {
		if _, _, producer, instance, _, ok := messages.ParseBatchMsgID(msgID); ok && producer == b.Producer {
			st.pool.From(producer, instance) // even when Add refuses it: a second process's batches collide
		}
		_, err = st.pool.Add(b)
	}
	st.seen[seq] = err != nil
	switch {
	case err == nil && (st.first.IsZero() || stored.Before(st.first)):
		st.first = stored
	case err != nil && !errors.Is(err, ErrRejected):
		st.pool.Corrupt()
	}
	return err != nil, err
}

// decodeOn decodes a batch stored on subject, which must name its run, step
// and producer.
func decodeOn(subject string, data []byte) (*messages.SampleBatch, error) {
	b, err := messages.DecodeBatch(data)
	if err == nil && messages.SamplesSubject(b.Run, b.Step, b.Producer) != subject {
		err = fmt.Errorf("%w: batch of run %q step %d producer %q stored on %s", ErrInvalidBatch, b.Run, b.Step, b.Producer, subject)
	}
	return b, err
}

// precheck is what a batch must pass to open its step: it decodes, matches
// its subject, and agrees with the command (ErrRejected otherwise).
func precheck(cmd messages.StepCommand, subject string, data []byte) error {
	b, err := decodeOn(subject, data)
	if err == nil {
		err = b.Validate()
	}
	if err != nil {
		return err
	}
	lim := newLimits(cmd)
	return lim.check(b)
}

// deadline is when the step is closed even with final batches missing: its
// expected end (first message stored + warm-up + duration) plus timeout.
func (st *openStep) deadline(timeout time.Duration) time.Time {
	info := st.pool.info
	return st.first.Add(time.Duration(info.Warmup) + time.Duration(info.Duration) + timeout)
}

// msgID is m's JetStream message id ("" without one).
func msgID(m jetstream.Msg) string {
	if h := m.Headers(); h != nil {
		return h.Get(jetstream.MsgIDHeader)
	}
	return ""
}
