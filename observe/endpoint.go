package observe

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/imapload/imapload/messages"
)

// Caps of one endpoint's figures: its memory grows with the series it
// holds, never with the window's length.
const (
	maxSeries       = 4096                    // series of all its figures
	maxFigureInputs = 2 * messages.MaxFigures // figures, and the hidden inputs of means
)

// endpoint folds one endpoint's scrapes of a step's window into figures,
// as they arrive (vegeta's way: accumulate in add, derive once in figures).
// It is pure: the time of each scrape is an argument.
type endpoint struct {
	url      string // redacted
	counters map[string]*counterFigure
	gauges   map[string]*gaugeFigure
	means    map[string]*meanFigure
	hidden   map[string]bool
	series   int
	scrapes  int
	failed   int
	omitted  int
	lastErr  string
	first    time.Time          // first successful scrape
	last     time.Time          // last successful scrape
	scrape   map[string]float64 // this scrape's gauge values, by figure
}

func newEndpoint(url string) *endpoint {
	return &endpoint{url: url, counters: map[string]*counterFigure{}, gauges: map[string]*gaugeFigure{},
		means: map[string]*meanFigure{}, hidden: map[string]bool{}, scrape: map[string]float64{}}
}

// add folds in one successful scrape, read at at.
func (e *endpoint) add(at time.Time, rs []reading, means []meanRule) {
	e.scrapes++
	if e.first.IsZero() {
		e.first = at
	}
	e.last = at
	omitted := 0
	clear(e.scrape)
	for _, r := range rs {
		if !e.take(r, at) {
			omitted++
		}
	}
	for _, c := range e.counters {
		c.closeInterval()
	}
	for name, v := range e.scrape {
		e.gauges[name].add(v)
	}
	for _, m := range means {
		if !e.mean(m) {
			omitted++
		}
	}
	for _, m := range e.means {
		m.interval(e.counters[m.num], e.counters[m.den])
	}
	e.omitted = max(e.omitted, omitted)
}

// take folds in one reading; false when a cap left it out.
func (e *endpoint) take(r reading, at time.Time) bool {
	if r.kind == gaugeKind {
		if e.gauges[r.figure] == nil && !e.room(1) {
			return false
		}
		if e.gauges[r.figure] == nil {
			e.gauges[r.figure] = newGaugeFigure()
		}
		v, seen := e.scrape[r.figure]
		e.scrape[r.figure] = combine(r.reduce, v, r.value, seen)
		return true
	}
	c := e.counters[r.figure]
	if c == nil {
		if !e.room(1) {
			return false
		}
		c = &counterFigure{reduce: r.reduce, series: map[string]*counterSeries{}}
		e.counters[r.figure], e.hidden[r.figure] = c, r.hidden
	}
	if c.series[r.series] == nil && e.series >= maxSeries {
		return false
	}
	if c.read(r.series, r.value, at) {
		e.series++
	}
	return true
}

// room reports whether figures (and series) may be added.
func (e *endpoint) room(n int) bool {
	return len(e.counters)+len(e.gauges)+len(e.means) < maxFigureInputs && e.series+n <= maxSeries
}

// mean adds mean rule m if it is new; false when a cap left it out.
func (e *endpoint) mean(m meanRule) bool {
	if e.means[m.name] != nil {
		return true
	}
	if !e.room(0) {
		return false
	}
	e.means[m.name] = &meanFigure{meanRule: m, lo: math.Inf(1), hi: math.Inf(-1)}
	return true
}

// fail counts a failed scrape and keeps its error.
func (e *endpoint) fail(err error) {
	e.failed++
	e.lastErr = clip(err.Error(), 500)
}

// figures derives the endpoint's figures, sorted by name, at most
// messages.MaxFigures of them.
func (e *endpoint) figures() messages.EndpointFigures {
	out := messages.EndpointFigures{URL: e.url, Scrapes: e.scrapes, Failed: e.failed, Error: e.lastErr,
		Covered: messages.Duration(e.last.Sub(e.first)), Omitted: e.omitted, Figures: []messages.Figure{}}
	for name, c := range e.counters {
		if f, ok := c.figure(name); ok && !e.hidden[name] {
			out.Figures = append(out.Figures, f)
		}
	}
	for name, g := range e.gauges {
		out.Figures = append(out.Figures, g.figure(name))
	}
	for _, m := range e.means {
		if f, ok := m.figure(e.counters[m.num], e.counters[m.den]); ok {
			out.Figures = append(out.Figures, f)
		}
	}
	slices.SortFunc(out.Figures, func(a, b messages.Figure) int { return cmp.Compare(a.Name, b.Name) })
	if n := len(out.Figures) - messages.MaxFigures; n > 0 {
		out.Figures, out.Omitted = out.Figures[:messages.MaxFigures], max(out.Omitted, n)
	}
	return out
}

// combine folds v into acc by rule: a sum, or the largest.
func combine(rule reduce, acc, v float64, seen bool) float64 {
	switch {
	case !seen:
		return v
	case rule == maxOf:
		return max(acc, v)
	}
	return acc + v
}

// finite reports whether every value is a finite number: JSON has no NaN.
func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// clip cuts s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
