package embedded

import (
	"fmt"
	"net"
	"time"
)

// maxCatchUp is how late (timer latency, goroutine hand-off) a command
// may take over a busy slot and still be served on the slot's schedule
// rather than from now. Without it every timer's lateness would add up and
// a saturated pool would serve noticeably less than Workers/ServiceTime.
const maxCatchUp = 2 * time.Millisecond

// gate charges every command its cost before the server runs it: a slot
// of the worker pool held for ServiceTime, then a slow account's
// SlowDelay. Both are timer waits, not CPU work, so the server's capacity
// does not depend on how busy the machine is.
type gate struct {
	slots     chan *slot // nil: no pool
	service   time.Duration
	slowDelay time.Duration
	done      <-chan struct{} // closed when the server closes
	load      gateLoad        // what the pool does, for /metrics (metrics.go)
	wear      *wear           // nil unless DegradeFor is set
}

// slot is one worker; free is when its last command's service ended on
// schedule.
type slot struct {
	free time.Time
}

func newGate(o *IMAPOptions, done <-chan struct{}) *gate {
	g := &gate{service: o.ServiceTime, slowDelay: o.SlowDelay, done: done, wear: newWear(o)}
	if o.Workers > 0 {
		g.slots = make(chan *slot, o.Workers)
		for range o.Workers {
			g.slots <- &slot{}
		}
	}
	return g
}

// admit waits until the command may run. Waiting in the queue is
// unbounded, like on an overloaded server, but ends early with an error
// when the server closes or the connection is dropped (gone is closed).
func (g *gate) admit(gone <-chan struct{}, slow, wears bool) error {
	if err := g.serve(gone, wears); err != nil || !slow {
		return err
	}
	return g.wait(g.slowDelay, gone)
}

// serve holds a slot for the service time (longer on a worn server for a
// command that wears, see wear).
func (g *gate) serve(gone <-chan struct{}, wears bool) error {
	if g.slots == nil {
		return g.wait(g.service, gone)
	}
	var sl *slot
	g.load.queued.Add(1)
	select {
	case sl = <-g.slots:
	case <-g.done:
		g.load.queued.Add(-1)
		return closedError()
	case <-gone:
		g.load.queued.Add(-1)
		return dropError()
	}
	since := g.load.acquired()
	defer func() { g.load.released(since); g.slots <- sl }()
	now := time.Now()
	sl.free = serviceEnd(sl.free, now, g.wear.take(now, g.service, wears))
	return g.wait(sl.free.Sub(now), gone)
}

// serviceEnd returns when a command that takes over a slot at now, whose
// previous command ended on schedule at free, finishes its service. A slot
// taken over at most maxCatchUp late is busy: the command keeps the slot's
// schedule, absorbing the lateness. Otherwise the slot was idle and the
// service starts now.
func serviceEnd(free, now time.Time, service time.Duration) time.Time {
	if late := now.Sub(free); late >= 0 && late <= maxCatchUp {
		return free.Add(service)
	}
	return now.Add(service)
}

func (g *gate) wait(d time.Duration, gone <-chan struct{}) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-g.done:
		return closedError()
	case <-gone:
		return dropError()
	}
}

// closedError is the read error of a connection whose command waited while
// the server closed; it too wraps net.ErrClosed.
func closedError() error { return fmt.Errorf("%w: %w", ErrClosed, net.ErrClosed) }

// dropError is the read error of a connection closed on purpose. It wraps
// net.ErrClosed so go-imap's server treats it as an ordinary close.
func dropError() error { return fmt.Errorf("%w: %w", ErrInjectedDrop, net.ErrClosed) }

// Capacity returns the most commands per second the server can serve,
// Workers/ServiceTime, or 0 when that is unlimited (no pool or no service
// time).
func (s *IMAP) Capacity() float64 {
	if s.opts.Workers <= 0 || s.opts.ServiceTime <= 0 {
		return 0
	}
	return float64(s.opts.Workers) / s.opts.ServiceTime.Seconds()
}
