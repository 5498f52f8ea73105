// Package opguard bounds one blocking operation on a connection by closing
// the connection when the operation takes too long, which makes it fail. The
// producer runs every IMAP command under it, and imapload seed every APPEND.
package opguard

import (
	"errors"
	"io"
	"sync"
	"time"
)

// ErrTimeout is Run's error when the operation did not return in time.
var ErrTimeout = errors.New("timeout")

// Run runs op and closes c (a client, or a connection that has no client
// yet) if op has not returned within d, which makes op fail; it then returns
// ErrTimeout. go-imap's own read timeout is a fixed 30 s, too long for a
// load test's view of "no answer".
//
// Every command runs under it, so it allocates nothing: the timer and its
// channel belong to an opGuard taken from a pool, reused command after
// command (a new time.AfterFunc and channel per command were three
// allocations, 256 bytes, and about a tenth of the producer's own CPU per
// command; BENCHMARKS.md).
func Run(c io.Closer, d time.Duration, op func() error) error {
	g := guards.Get().(*opGuard)
	err := g.run(c, d, op)
	guards.Put(g)
	return err
}

// guards are the idle opGuards. A guard that fired is only put back once its
// timer function has finished, so a pooled guard's timer is always stopped.
var guards = sync.Pool{New: func() any { return newOpGuard() }}

// opGuard is a timeout for one operation at a time: a reusable timer that
// closes the operation's connection when it fires.
type opGuard struct {
	t     *time.Timer
	fired chan struct{} // one value per firing, sent once c is closed

	mu sync.Mutex // c is set by run and read by the timer's goroutine
	c  io.Closer
}

// newOpGuard returns a guard whose timer is stopped.
func newOpGuard() *opGuard {
	g := &opGuard{fired: make(chan struct{}, 1)}
	g.t = time.AfterFunc(time.Hour, g.fire)
	g.t.Stop()
	return g
}

// run is Run with g's timer.
func (g *opGuard) run(c io.Closer, d time.Duration, op func() error) error {
	g.setCloser(c)
	defer g.setCloser(nil) // a pooled guard holds no connection
	g.t.Reset(d)
	err := op()
	if g.t.Stop() {
		return err
	}
	<-g.fired // the timer fired: wait until it has closed c
	return ErrTimeout
}

func (g *opGuard) setCloser(c io.Closer) {
	g.mu.Lock()
	g.c = c
	g.mu.Unlock()
}

// fire closes the guarded connection, on the timer's goroutine.
func (g *opGuard) fire() {
	g.mu.Lock()
	c := g.c
	g.mu.Unlock()
	if c != nil {
		c.Close()
	}
	g.fired <- struct{}{}
}
