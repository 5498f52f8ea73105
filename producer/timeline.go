package producer

import "time"

// timeline is one step's clock. Load is offered from start for warmup +
// duration; the measurement window is [start+warmup, start+warmup+duration).
// start carries Go's monotonic reading, so every comparison and offset below
// is immune to wall-clock jumps.
type timeline struct {
	start    time.Time
	warmup   time.Duration
	duration time.Duration
}

// windowStart is the start of the measurement window.
func (tl timeline) windowStart() time.Time { return tl.start.Add(tl.warmup) }

// end is when the step stops offering load (the end of the window).
func (tl timeline) end() time.Time { return tl.start.Add(tl.length()) }

// length is warm-up plus measurement window.
func (tl timeline) length() time.Duration { return tl.warmup + tl.duration }

// inWindow reports whether a command intended to start at t is measured.
func (tl timeline) inWindow(t time.Time) bool {
	d := t.Sub(tl.start)
	return d >= tl.warmup && d < tl.length()
}

// offset is t relative to the window start, as batches' From and To are
// (negative during warm-up).
func (tl timeline) offset(t time.Time) time.Duration { return t.Sub(tl.windowStart()) }
