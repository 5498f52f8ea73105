package producer

import (
	"log/slog"
	"sync"

	"github.com/imapload/imapload/messages"
)

// maxLoggedKinds bounds the (phase, kind) pairs one step remembers having
// logged, so that a server answering with ever new messages cannot grow it
// without end.
const maxLoggedKinds = 256

// errKey is one (phase, kind) pair.
type errKey struct {
	phase messages.Phase
	kind  string
}

// firstErrors logs the first error of each (phase, kind) of a step, once, at
// Warn level, with its kind and a scrubbed example: a wrong password or a
// closed port then shows in the producer's log as soon as it happens,
// warm-up included, and not only in the report — without a line per
// failure. It is safe for concurrent use by a step's sessions.
type firstErrors struct {
	log *slog.Logger

	mu   sync.Mutex
	seen map[errKey]bool
	full bool // maxLoggedKinds reached
}

func newFirstErrors(log *slog.Logger) *firstErrors {
	return &firstErrors{log: log, seen: map[errKey]bool{}}
}

// note logs an error of phase p, of kind and example (see
// recorder.Recorder.Describe), unless one of that kind was logged before.
func (f *firstErrors) note(p messages.Phase, kind, example string) {
	switch f.first(errKey{p, kind}) {
	case firstOfKind:
		f.log.Warn("producer: first error of its kind in this step", "phase", p.String(), "kind", kind, "example", example)
	case firstUnlogged:
		f.log.Warn("producer: too many error kinds in this step; further ones are not logged (see the report)",
			"phase", p.String(), "kind", kind, "limit", maxLoggedKinds)
	}
}

// What first found.
const (
	seenBefore    = iota
	firstOfKind   // log it
	firstUnlogged // the first kind past maxLoggedKinds: say that logging stops
)

func (f *firstErrors) first(k errKey) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.seen[k] || f.full:
		return seenBefore
	case len(f.seen) < maxLoggedKinds:
		f.seen[k] = true
		return firstOfKind
	}
	f.full = true
	return firstUnlogged
}
