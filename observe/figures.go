package observe

import (
	"math"
	"time"

	"github.com/imapload/imapload/messages"
)

// counterFigure is a rate over the window, from counters of one or more
// series. A series' increase over the window is the sum of its increases
// from scrape to scrape; a counter that went down was reset (the process
// restarted) and counts from zero, so its new value is the increase.
type counterFigure struct {
	reduce reduce
	series map[string]*counterSeries
	// This scrape's interval, across series: the combined rate, the summed
	// increase, and whether any series had a previous scrape.
	rate, inc float64
	seen      bool
	lastInc   float64 // the summed increase of the last closed interval
	lastSeen  bool
	lo, hi    float64 // the lowest and highest interval rates
	intervals int
}

type counterSeries struct {
	first, at time.Time // first and last scrape
	prev      float64   // value at the last scrape
	total     float64   // increase from first to at
}

// read folds in one series' value at at; true when the series is new.
func (c *counterFigure) read(key string, v float64, at time.Time) bool {
	s := c.series[key]
	if s == nil {
		c.series[key] = &counterSeries{first: at, at: at, prev: v}
		return true
	}
	dt := at.Sub(s.at).Seconds()
	if dt <= 0 {
		return false // the same scrape twice: nothing new
	}
	d := v - s.prev
	if d < 0 {
		d = v // reset
	}
	s.total, s.prev, s.at = s.total+d, v, at
	c.rate = combine(c.reduce, c.rate, d/dt, c.seen)
	c.inc += d
	c.seen = true
	return false
}

// closeInterval ends this scrape's interval.
func (c *counterFigure) closeInterval() {
	c.lastInc, c.lastSeen = c.inc, c.seen
	if c.seen {
		if c.intervals == 0 {
			c.lo, c.hi = c.rate, c.rate
		}
		c.lo, c.hi = min(c.lo, c.rate), max(c.hi, c.rate)
		c.intervals++
	}
	c.rate, c.inc, c.seen = 0, 0, false
}

// total is the increase over the window, summed over the series.
func (c *counterFigure) total() float64 {
	t := 0.0
	for _, s := range c.series {
		t += s.total
	}
	return t
}

// figure is the rate over the window: each series' increase over the time
// it was scraped, combined. A figure with no two scrapes has none.
func (c *counterFigure) figure(name string) (messages.Figure, bool) {
	v, seen := 0.0, false
	for _, s := range c.series {
		if secs := s.at.Sub(s.first).Seconds(); secs > 0 {
			v, seen = combine(c.reduce, v, s.total/secs, seen), true
		}
	}
	f := messages.Figure{Name: name, Kind: messages.FigureRate, Value: v, Min: c.lo, Max: c.hi}
	return f, seen && c.intervals > 0 && finite(v, c.lo, c.hi)
}

// gaugeFigure is a gauge's min, mean and max over the scrapes.
type gaugeFigure struct {
	lo, hi, sum float64
	n           int
}

func newGaugeFigure() *gaugeFigure { return &gaugeFigure{lo: math.Inf(1), hi: math.Inf(-1)} }

func (g *gaugeFigure) add(v float64) {
	g.lo, g.hi, g.sum, g.n = min(g.lo, v), max(g.hi, v), g.sum+v, g.n+1
}

func (g *gaugeFigure) figure(name string) messages.Figure {
	f := messages.Figure{Name: name, Kind: messages.FigureGauge}
	if g.n > 0 && finite(g.sum/float64(g.n)) {
		f.Value, f.Min, f.Max = g.sum/float64(g.n), g.lo, g.hi
	}
	return f
}

// meanFigure is num's increase over den's, over the window and per
// interval (intervals without an event of den left out).
type meanFigure struct {
	meanRule
	lo, hi float64
}

func (m *meanFigure) interval(num, den *counterFigure) {
	if num == nil || den == nil || !den.lastSeen || !(den.lastInc > 0) {
		return
	}
	v := num.lastInc / den.lastInc
	m.lo, m.hi = min(m.lo, v), max(m.hi, v)
}

func (m *meanFigure) figure(num, den *counterFigure) (messages.Figure, bool) {
	if num == nil || den == nil || !(den.total() > 0) {
		return messages.Figure{}, false
	}
	v := num.total() / den.total()
	f := messages.Figure{Name: m.name, Kind: messages.FigureMean, Value: v, Min: m.lo, Max: m.hi}
	return f, finite(v, m.lo, m.hi)
}
