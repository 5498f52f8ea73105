package producer

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/imapload/imapload/messages"
)

// errNeverSeen is a delivery to an account with a held connection that
// did not show on it within Options.InboxTimeout (phase inbox).
var errNeverSeen = errors.New("delivered, never seen on the held IDLE connection")

// inboxWatch matches a step's deliveries with what its held IDLE
// connections (RFC 2177) see: a delivery to an account with a held
// connection is expected by its Message-ID; the connection that fetches
// that Message-ID after an EXISTS records its time to inbox, from the end
// of DATA to the EXISTS; one never seen within the timeout is missing, and
// a connection that sees one Message-ID twice saw a duplicate delivery.
// Safe for concurrent use.
type inboxWatch struct {
	env     *sessionEnv
	timeout time.Duration

	mu      sync.Mutex
	held    map[string]int         // account → held connections idling on it
	pending map[string]expected    // Message-ID → a delivery not yet seen
	seen    map[string]seenArrival // Message-ID → who saw it, for duplicates
	empty   chan struct{}          // closed when pending empties, while drain waits
}

// expected is a delivery awaiting its arrival.
type expected struct {
	intended time.Time // the delivery's intended start: decides its window
	dataEnd  time.Time // end of DATA: time to inbox runs from here
}

// seenArrival is a delivery seen, and the connections that saw it.
type seenArrival struct {
	intended time.Time
	by       []*idleConn
	at       time.Time
}

func newInboxWatch(env *sessionEnv, timeout time.Duration) *inboxWatch {
	return &inboxWatch{env: env, timeout: timeout, held: map[string]int{},
		pending: map[string]expected{}, seen: map[string]seenArrival{}}
}

// up and down count a held connection of account idling, or gone.
func (w *inboxWatch) up(account string) {
	w.mu.Lock()
	w.held[account]++
	w.mu.Unlock()
}

func (w *inboxWatch) down(account string) {
	w.mu.Lock()
	if w.held[account]--; w.held[account] <= 0 {
		delete(w.held, account)
	}
	w.mu.Unlock()
}

// expect notes a delivery about to end its DATA, if its account has a held
// connection; it reports whether it does (the delivery is then watched).
// A delivery that then fails is withdrawn with forget.
func (w *inboxWatch) expect(id, account string, intended, dataEnd time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held[account] == 0 {
		return false
	}
	w.pending[id] = expected{intended: intended, dataEnd: dataEnd}
	return true
}

// forget withdraws a delivery the server did not accept.
func (w *inboxWatch) forget(id string) {
	w.mu.Lock()
	delete(w.pending, id)
	w.signal()
	w.mu.Unlock()
}

// sighted records that c fetched the message id, announced by an EXISTS
// read at at. A Message-ID none of this step's deliveries sent is ignored.
func (w *inboxWatch) sighted(c *idleConn, id string, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if e, ok := w.pending[id]; ok {
		delete(w.pending, id)
		w.seen[id] = seenArrival{intended: e.intended, by: []*idleConn{c}, at: at}
		w.signal()
		if w.env.tl.inWindow(e.intended) {
			w.env.rec.Record(messages.Inbox, max(at.Sub(e.dataEnd), 0), max(at.Sub(e.dataEnd), 0))
			w.env.rec.Arrived(messages.Arrivals{Seen: 1})
		}
		return
	}
	s, ok := w.seen[id]
	if !ok {
		return
	}
	for _, by := range s.by {
		if by == c {
			if w.env.tl.inWindow(s.intended) {
				w.env.rec.Arrived(messages.Arrivals{Duplicates: 1})
			}
			return
		}
	}
	s.by = append(s.by, c) // another held connection of the same account
	w.seen[id] = s
}

// expire counts the deliveries expected since more than the timeout before
// now as missing, and forgets arrivals seen more than a timeout ago.
func (w *inboxWatch) expire(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, e := range w.pending {
		if now.Sub(e.dataEnd) >= w.timeout {
			delete(w.pending, id)
			w.missing(e)
		}
	}
	for id, s := range w.seen {
		if now.Sub(s.at) >= w.timeout {
			delete(w.seen, id)
		}
	}
	w.signal()
}

// missing records e as never seen.
func (w *inboxWatch) missing(e expected) {
	in := w.env.tl.inWindow(e.intended)
	w.env.fail(messages.Inbox, fmt.Errorf("%w within %v", errNeverSeen, w.timeout), in)
	if in {
		w.env.rec.Arrived(messages.Arrivals{Missing: 1})
	}
}

// drain waits until every expected delivery was seen or expired (the
// last one a timeout after its end of DATA), expiring as it goes, or
// until stop is closed; what is still expected then is missing.
func (w *inboxWatch) drain(stop <-chan struct{}) {
	tick := time.NewTicker(min(w.timeout/4, time.Second))
	defer tick.Stop()
	for {
		w.mu.Lock()
		if len(w.pending) == 0 {
			w.mu.Unlock()
			return
		}
		w.empty = make(chan struct{})
		empty := w.empty
		w.mu.Unlock()
		select {
		case <-empty:
		case now := <-tick.C:
			w.expire(now)
		case <-stop:
			w.mu.Lock()
			for id, e := range w.pending {
				delete(w.pending, id)
				w.missing(e)
			}
			w.mu.Unlock()
			return
		}
	}
}

// signal wakes drain when nothing is expected any more; w.mu is held.
func (w *inboxWatch) signal() {
	if w.empty != nil && len(w.pending) == 0 {
		close(w.empty)
		w.empty = nil
	}
}
