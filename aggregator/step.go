package aggregator

import (
	"fmt"
	"strconv"
	"strings"
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
	first     time.Time       // when its earliest message was stored
	anchor    jetstream.Msg
	anchorSeq uint64
}

func newOpenStep(k stepKey, opts *PoolOptions) *openStep {
	return &openStep{key: k, pool: NewPool(k.run, k.step, opts), seen: map[uint64]bool{}}
}

// parseSubject reads the step from a samples subject,
// "imapload.samples.<run>.<step>.<producer>".
func parseSubject(subject string) (stepKey, bool) {
	tok := strings.Split(subject, ".")
	if len(tok) != 5 || tok[0] != "imapload" || tok[1] != "samples" {
		return stepKey{}, false
	}
	step, err := strconv.Atoi(tok[3])
	if err != nil || step < 1 || step > messages.MaxStep || messages.ValidName(tok[2]) != nil {
		return stepKey{}, false
	}
	return stepKey{tok[2], step}, true
}

// absorb pools the message stored at seq, once. It reports whether the
// message is corrupt (undecodable, refused by the pool, or not matching its
// subject), whether or not it was new.
func (st *openStep) absorb(seq uint64, stored time.Time, subject string, data []byte) (corrupt bool, err error) {
	if c, dup := st.seen[seq]; dup {
		return c, nil
	}
	if st.first.IsZero() || stored.Before(st.first) {
		st.first = stored
	}
	b, err := messages.DecodeBatch(data)
	if err == nil && messages.SamplesSubject(b.Run, b.Step, b.Producer) != subject {
		err = fmt.Errorf("%w: batch of run %q step %d producer %q stored on %s", ErrInvalidBatch, b.Run, b.Step, b.Producer, subject)
	}
	if err == nil {
		_, err = st.pool.Add(b)
	}
	st.seen[seq] = err != nil
	if err != nil {
		st.pool.Corrupt()
	}
	return err != nil, err
}

// deadline is when the step is closed even with final batches missing: its
// expected end (first message stored + warm-up + duration) plus timeout.
func (st *openStep) deadline(timeout time.Duration) time.Time {
	info := st.pool.info
	return st.first.Add(time.Duration(info.Warmup) + time.Duration(info.Duration) + timeout)
}
