package aggregator

import (
	"context"
	"time"

	"github.com/imapload/imapload/messages"
)

// published is what the aggregator knows of a step whose result is in the
// results stream: the result's revision, the last stream message it
// considered and how many batches it pooled.
type published struct {
	revision int
	through  uint64
	batches  uint64
}

// publishedOf reads what a published result says of its step.
func publishedOf(r *messages.StepResult) published {
	return published{revision: r.Revision, through: r.ThroughSeq, batches: r.Batches}
}

// later keeps the newer of two records of one step.
func (p published) later(q published) published {
	if q.revision > p.revision || (q.revision == p.revision && q.through > p.through) {
		return q
	}
	return p
}

// reopen opens a published step again for a batch stored after its result
// (seq above the result's through): the step is replayed whole and will be
// published as the next revision, if it pools more batches than before.
// While it is open, later batches join it without another replay; it
// closes once finished, or Options.StepTimeout after it re-opened.
func (a *Aggregator) reopen(ctx context.Context, cmd messages.StepCommand, prev published) (*openStep, error) {
	st, err := a.replay(ctx, cmd)
	if err != nil {
		return nil, err
	}
	st.prev, st.reopened = &prev, a.now()
	a.log.Info("aggregator: batches stored after the step's result, re-opening it",
		"run", cmd.Run, "step", cmd.Step, "revision", prev.revision+1)
	return st, nil
}

// isLate reports whether stream sequence seq of step k came after the
// step's published result.
func (a *Aggregator) isLate(k stepKey, seq uint64) (published, bool) {
	p, ok := a.closed[k]
	return p, ok && seq > p.through
}

// through is the highest stream sequence st has considered.
func (st *openStep) through() uint64 {
	var hi uint64
	for seq := range st.seen {
		hi = max(hi, seq)
	}
	return hi
}

// unchanged reports whether a re-opened step pooled no batch beyond its
// published result: the late messages were duplicates or refused, and
// there is nothing new to publish.
func (st *openStep) unchanged() bool {
	return st.prev != nil && st.pool.totals.batches <= st.prev.batches
}

// revision is the revision st is published as.
func (st *openStep) revision() int {
	if st.prev == nil {
		return 0
	}
	return st.prev.revision + 1
}

// closesAt is when st is closed even though unfinished: its deadline, or
// for a re-opened step the step timeout after it re-opened.
func (st *openStep) closesAt(timeout time.Duration) time.Time {
	if st.prev != nil {
		return st.reopened.Add(timeout)
	}
	return st.deadline(timeout)
}
