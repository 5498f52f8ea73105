package embedded

import (
	"sync"
	"time"
)

// Defaults of the wear model (IMAPOptions.DegradeFor).
const (
	defaultDegradeFactor = 4           // how many times slower a worn server serves
	defaultDegradeAfter  = time.Second // the window over which overload is judged
	// defaultDegradeShare is the share of the pool's time held by the
	// commands that wear, over a window, at which the server counts as
	// overloaded.
	defaultDegradeShare = 0.9
)

// wear models a server worn by overload (IMAPOptions.DegradeFor): when the
// commands that wear taken in a window of DegradeAfter held the pool's
// slots for at least DegradeShare of it, every command holds its slot DegradeFactor
// times ServiceTime until DegradeFor after that window. A worn server
// offered more than its worn capacity stays overloaded, so it stays worn:
// it recovers only when the load drops. A worn server still lets sessions
// in at its usual speed (LOGIN, SELECT and the like do not wear): it is
// the work they ask for that it serves slowly. Off (nil) unless DegradeFor
// is set.
type wear struct {
	workers      int
	after, lasts time.Duration
	factor       int
	share        float64
	mu           sync.Mutex
	start        time.Time     // the current window's start; zero before the first command
	busy         time.Duration // the slot time of the commands taken in it
	until        time.Time     // the server serves slowly until then
}

func newWear(o *IMAPOptions) *wear {
	if o.DegradeFor <= 0 || o.Workers <= 0 {
		return nil
	}
	w := &wear{workers: o.Workers, after: o.DegradeAfter, lasts: o.DegradeFor, factor: o.DegradeFactor, share: o.DegradeShare}
	if w.share <= 0 {
		w.share = defaultDegradeShare
	}
	if w.after <= 0 {
		w.after = defaultDegradeAfter
	}
	if w.factor <= 0 {
		w.factor = defaultDegradeFactor
	}
	return w
}

// take returns how long a command taken at now holds its slot, base when
// the server is not worn or the command does not wear (a session's
// set-up), and counts it in the current window.
func (w *wear) take(now time.Time, base time.Duration, wears bool) time.Duration {
	if w == nil {
		return base
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.start.IsZero() {
		w.start = now
	}
	if el := now.Sub(w.start); el >= w.after {
		if float64(w.busy) >= w.share*float64(w.workers)*float64(el) {
			w.until = now.Add(w.lasts)
		}
		w.start, w.busy = now, 0
	}
	if !wears {
		return base
	}
	d := base
	if now.Before(w.until) {
		d = base * time.Duration(w.factor)
	}
	w.busy += d
	return d
}

// wearsCommand reports whether a worn server serves the command slowly:
// every one but a session's set-up and its end.
func wearsCommand(name string) bool {
	switch name {
	case "SELECT", "EXAMINE":
		return false
	}
	return mailboxCommand(name)
}
