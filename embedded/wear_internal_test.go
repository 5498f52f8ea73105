package embedded

import (
	"testing"
	"time"
)

// TestWear: a window whose commands held the slot under 90% of it leaves
// the server as it was; a busier one wears it for DegradeFor, at
// DegradeFactor times the service time; then it has recovered.
func TestWear(t *testing.T) {
	w := newWear(&IMAPOptions{Workers: 1, DegradeFor: 5 * time.Second, DegradeAfter: time.Second, DegradeFactor: 3})
	t0 := time.Unix(1000, 0)
	base := 100 * time.Millisecond
	take := func(from, to time.Duration, every time.Duration, want time.Duration) {
		t.Helper()
		for at := from; at < to; at += every {
			if got := w.take(t0.Add(at), base, true); got != want {
				t.Fatalf("at %v: wear.take() = %v, want %v", at, got, want)
			}
		}
	}
	take(0, 2*time.Second, 200*time.Millisecond, base)              // 50% busy: not worn
	take(2*time.Second, 3*time.Second, 100*time.Millisecond, base)  // 100% busy for a window
	take(3*time.Second, 3100*time.Millisecond, time.Second, 3*base) // judged at 3 s: worn
	if got := w.take(t0.Add(3500*time.Millisecond), base, false); got != base {
		t.Errorf("worn wear.take() of a set-up command = %v, want %v", got, base)
	}
	take(4*time.Second, 8*time.Second, time.Second, 3*base) // 30% busy, still worn until 8 s
	take(8*time.Second, 10*time.Second, time.Second, base)  // recovered
	if newWear(&IMAPOptions{Workers: 1}) != nil || newWear(&IMAPOptions{DegradeFor: time.Second}) != nil {
		t.Errorf("newWear() without DegradeFor or Workers is not nil")
	}
	var none *wear
	if got := none.take(t0, base, true); got != base {
		t.Errorf("nil wear.take() = %v, want %v", got, base)
	}
}
