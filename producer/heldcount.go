package producer

import (
	"sync"
	"time"
)

// heldCount counts a step's held connections for its batches: how many are
// idling now, the fewest idling at any moment of the measurement window
// since the previous cut, and how many broke in the window. The count seen
// at the window's start and end is noted by timers (see watch), so that a
// batch straddling either edge reports the window's part only.
type heldCount struct {
	tl timeline

	mu    sync.Mutex
	held  int
	min   int  // fewest held in the window since the previous cut
	seen  bool // min holds an observation made in the window
	final int  // held at the window's end, once ended is set
	ended bool
	drops uint64 // connections broken in the window since the previous cut
	stop  []*time.Timer
}

// watch starts the timers that note the count at the window's start and end.
func (h *heldCount) watch(tl timeline) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tl = tl
	h.stop = []*time.Timer{
		time.AfterFunc(time.Until(tl.windowStart()), func() { h.note(time.Now()) }),
		time.AfterFunc(time.Until(tl.end()), h.endWindow),
	}
}

// unwatch stops the timers of watch.
func (h *heldCount) unwatch() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, t := range h.stop {
		t.Stop()
	}
}

// up counts a connection set up and idling.
func (h *heldCount) up() {
	h.mu.Lock()
	h.held++
	h.mu.Unlock()
}

// down counts a connection gone at now; dropped when it broke, rather than
// being closed at the step's end (which is no shortfall).
func (h *heldCount) down(now time.Time, dropped bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.held--
	if dropped && h.tl.inWindow(now) {
		h.drops++
		h.noteLocked(now)
	}
}

func (h *heldCount) note(now time.Time) {
	h.mu.Lock()
	h.noteLocked(now)
	h.mu.Unlock()
}

// noteLocked folds the count at now into the window's minimum.
func (h *heldCount) noteLocked(now time.Time) {
	if !h.tl.inWindow(now) {
		return
	}
	if !h.seen || h.held < h.min {
		h.min, h.seen = h.held, true
	}
}

// endWindow notes the count at the window's end (or at the step's stop),
// before the step closes its connections; only its first call counts.
func (h *heldCount) endWindow() {
	h.mu.Lock()
	if !h.ended {
		h.final, h.ended = h.held, true
	}
	h.mu.Unlock()
}

// cut returns the count for a batch cut at now and starts the next one.
// After the window, held is the count at its end (the step then closes its
// connections, which no batch should show as a shortfall).
func (h *heldCount) cut(now time.Time) (held, least uint32, drops uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	cur := h.held
	if h.ended {
		cur = h.final
	} else {
		h.noteLocked(now)
	}
	least = uint32(max(cur, 0))
	if h.seen {
		least = uint32(max(min(h.min, cur), 0))
	}
	held, drops = uint32(max(cur, 0)), h.drops
	h.min, h.seen, h.drops = cur, false, 0
	return held, least, drops
}
