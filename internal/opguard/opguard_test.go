package opguard

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// closer counts its Close calls and unblocks waiters on the first.
type closer struct {
	n      atomic.Int32
	closed chan struct{}
}

func newCloser() *closer { return &closer{closed: make(chan struct{})} }

func (c *closer) Close() error {
	if c.n.Add(1) == 1 {
		close(c.closed)
	}
	return nil
}

func TestRun(t *testing.T) {
	errOp := errors.New("op failed")
	tests := []struct {
		name      string
		d         time.Duration
		op        func(c *closer) error
		want      error
		wantClose int32
	}{
		{name: "answered", d: time.Hour, op: func(*closer) error { return nil }},
		{name: "failed", d: time.Hour, op: func(*closer) error { return errOp }, want: errOp},
		{name: "no answer", d: time.Millisecond, op: func(c *closer) error { <-c.closed; return errOp },
			want: ErrTimeout, wantClose: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Twice each: a guard is reused after it fired and after it did not.
			for range 2 {
				c := newCloser()
				if err := Run(c, tt.d, func() error { return tt.op(c) }); err != tt.want {
					t.Fatalf("Run() = %v, want %v", err, tt.want)
				}
				if n := c.n.Load(); n != tt.wantClose {
					t.Fatalf("Run() closed the client %d times, want %d", n, tt.wantClose)
				}
			}
		})
	}
}

// TestRunNested: an operation may guard another (a STARTTLS dial
// guards the greeting inside the connection's guard); each has its own timer.
func TestRunNested(t *testing.T) {
	outer, inner := newCloser(), newCloser()
	err := Run(outer, time.Hour, func() error {
		return Run(inner, time.Millisecond, func() error { <-inner.closed; return nil })
	})
	if err != ErrTimeout || outer.n.Load() != 0 || inner.n.Load() != 1 {
		t.Fatalf("nested Run() = %v, closes outer %d inner %d; want ErrTimeout, 0, 1",
			err, outer.n.Load(), inner.n.Load())
	}
}

// BenchmarkRun is the guard's own cost per command: arm a timeout,
// run an operation that answers at once, disarm.
func BenchmarkRun(b *testing.B) {
	c := newCloser()
	op := func() error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		if err := Run(c, time.Minute, op); err != nil {
			b.Fatal(err)
		}
	}
}
