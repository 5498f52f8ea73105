package aggregator

import (
	"log/slog"
	"sync"
	"time"
)

// warnLimiter logs each kind of warning at most once per interval, with the
// number of like warnings since the last one logged, so that a flood of bad
// messages costs a few log lines a minute rather than one line each. It also
// keeps the total per kind. It is safe for concurrent use.
type warnLimiter struct {
	log   *slog.Logger
	every time.Duration
	now   func() time.Time

	mu    sync.Mutex
	kinds map[string]*warnKind
}

type warnKind struct {
	last       time.Time
	suppressed uint64
	total      uint64
}

func newWarnLimiter(log *slog.Logger, every time.Duration, now func() time.Time) *warnLimiter {
	return &warnLimiter{log: log, every: every, now: now, kinds: map[string]*warnKind{}}
}

// warn counts one warning of kind and logs it, with args, unless one of the
// same kind was logged within the interval. The kinds are a fixed set of
// messages, so the map stays small.
func (w *warnLimiter) warn(kind string, args ...any) {
	w.mu.Lock()
	k := w.kinds[kind]
	if k == nil {
		k = &warnKind{}
		w.kinds[kind] = k
	}
	k.total++
	now := w.now()
	if !k.last.IsZero() && now.Sub(k.last) < w.every {
		k.suppressed++
		w.mu.Unlock()
		return
	}
	n, total := k.suppressed, k.total
	k.last, k.suppressed = now, 0
	w.mu.Unlock()
	w.log.Warn(kind, append(args, "suppressed_since_last", n, "total", total)...)
}

// total is how many warnings of kind there were.
func (w *warnLimiter) total(kind string) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if k := w.kinds[kind]; k != nil {
		return k.total
	}
	return 0
}
