package aggregator

import (
	"sync"
	"time"

	"github.com/imapload/imapload/messages"
)

// commandBook keeps, for each step, the first valid step command read from
// the steps stream: every batch is checked against it. It holds at most max
// steps; past that the oldest is forgotten, as the stream itself forgets
// its oldest commands. It is safe for concurrent use: the stream reader
// adds, the batch handler looks up.
type commandBook struct {
	max int

	mu      sync.Mutex
	byStep  map[stepKey]messages.StepCommand
	order   []stepKey // insertion order, a ring once full
	head    int       // the oldest entry of order once full
	read    uint64    // stream sequence of the last command read
	asOf    time.Time // server time of the last look at the stream's end
	lastSeq uint64    // the stream's last sequence then
	counts  bookCounts
}

// bookCounts count the commands the book did not keep.
type bookCounts struct {
	malformed, conflicting, repeated, evicted uint64
}

func newCommandBook(max int) *commandBook {
	return &commandBook{max: max, byStep: map[stepKey]messages.StepCommand{}}
}

// add reads the command stored at seq. A malformed one is ignored, and so
// is a later one for a step already known (counted as repeated when it is
// the same step shape, conflicting when not). It returns the command's
// outcome for the log.
func (b *commandBook) add(seq uint64, data []byte) (messages.StepCommand, error) {
	cmd, err := messages.ParseStepCommand(data)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.read = max(b.read, seq)
	if err != nil {
		b.counts.malformed++
		return cmd, err
	}
	k := stepKey{cmd.Run, cmd.Step}
	if old, ok := b.byStep[k]; ok {
		if sameShape(old, cmd) {
			b.counts.repeated++
			return cmd, nil
		}
		b.counts.conflicting++
		return cmd, errConflicting
	}
	b.keep(k, cmd)
	return cmd, nil
}

// keep stores cmd, forgetting the oldest step when the book is full.
func (b *commandBook) keep(k stepKey, cmd messages.StepCommand) {
	b.byStep[k] = cmd
	if len(b.order) < b.max {
		b.order = append(b.order, k)
		return
	}
	delete(b.byStep, b.order[b.head])
	b.counts.evicted++
	b.order[b.head] = k
	b.head = (b.head + 1) % b.max
}

// sameShape reports whether two commands give the same step for a batch.
func sameShape(a, b messages.StepCommand) bool {
	return a.Rate == b.Rate && a.Duration == b.Duration && a.WarmupOrDefault() == b.WarmupOrDefault() &&
		a.ProducerRate == b.ProducerRate && a.Producers == b.Producers
}

// get returns the command of step k.
func (b *commandBook) get(k stepKey) (messages.StepCommand, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cmd, ok := b.byStep[k]
	return cmd, ok
}

// covers reports whether every command stored up to stored (the stream's
// clock) has been read, as of the last look at the stream's end.
func (b *commandBook) covers(stored time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !stored.After(b.asOf) && b.read >= b.lastSeq
}

// looked records a look at the stream's end: its last sequence at server
// time asOf.
func (b *commandBook) looked(lastSeq uint64, asOf time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if asOf.After(b.asOf) {
		b.asOf, b.lastSeq = asOf, lastSeq
	}
}

// caughtUp reports whether the reader has reached the last look's end.
func (b *commandBook) caughtUp() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.read >= b.lastSeq
}

func (b *commandBook) stats() (steps int, c bookCounts) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.byStep), b.counts
}
