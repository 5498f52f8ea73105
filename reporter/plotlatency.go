package reporter

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/imapload/imapload/messages"
)

// openLabel names, in the latency legend, the P99 points that are only a
// lower bound or have no upper bound.
const openLabel = "P99 with no upper bound (too few samples, or never sent)"

// PlotLatency draws the response-time P99 of each phase against the offered
// rate on a log scale, with the P99's 95% interval as error bars and the knee
// as a dashed red vertical line (a dotted one at its low end when it is a
// range). A P99 whose interval is open, or that is only a lower bound, is a
// grey point without error bars; inconclusive steps are hollow grey squares,
// named in the legend with their reason codes, off the phases' lines.
func PlotLatency(r messages.RunReport) (*plot.Plot, error) {
	p := newPlot(fmt.Sprintf("run %s%s: P99 response time per phase", r.Run, verdictSuffix(r)), "offered rate (commands/s)", "P99 response time (ms, log scale)")
	lo, hi, open := math.Inf(1), math.Inf(-1), false
	for i, name := range allPhases(r.Steps) {
		pts := p99Points(r.Steps, name)
		if len(pts.all) == 0 {
			continue
		}
		plo, phi := pts.extent()
		lo, hi, open = min(lo, plo), max(hi, phi), open || len(pts.open) > 0
		if err := addPhase(p, name, pts, i); err != nil {
			return nil, err
		}
	}
	bad := inconclusiveP99s(r.Steps)
	for _, xy := range bad {
		lo, hi = min(lo, xy.Y), max(hi, xy.Y)
	}
	if math.IsInf(lo, 0) {
		p.Title.Text += " (no latencies yet)"
		return p, nil
	}
	// Room below the lowest point, and a decade above the highest for the legend.
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	p.Y.Min, p.Y.Max = lo/1.5, hi*10
	if err := addLatencyLegends(p, r.Steps, bad, open); err != nil {
		return nil, err
	}
	return p, addKneeLines(p, r.Knee, p.Y.Min, p.Y.Max)
}

// addLatencyLegends draws the inconclusive points and names them, and names
// the grey open P99 points.
func addLatencyLegends(p *plot.Plot, steps []messages.StepResult, bad plotter.XYs, open bool) error {
	if err := addScatter(p, inconclusiveLabel(steps), bad, invalidColor, draw.SquareGlyph{}, 4); err != nil {
		return err
	}
	if !open {
		return nil
	}
	s, err := plotter.NewScatter(plotter.XYs{{}}) // a legend thumbnail only
	if err != nil {
		return fmt.Errorf("reporter: plot: %w", err)
	}
	s.Color, s.Shape = invalidColor, draw.RingGlyph{}
	p.Legend.Add(openLabel, s)
	return nil
}

// p99s are one phase's P99 points in offered-rate order: all of them (the
// line), the closed ones with their 95% interval as error bars, and the open
// ones (no upper bound, or only a lower bound) apart.
type p99s struct {
	all    plotter.XYs
	closed errorPoints
	open   plotter.XYs
}

// errorPoints are points with offsets below and above; a lower offset never
// reaches zero, which the log scale cannot draw.
type errorPoints struct {
	plotter.XYs
	plotter.YErrors
}

func p99Points(steps []messages.StepResult, phase string) p99s {
	var pts p99s
	for _, s := range byRate(steps) {
		ph, ok := s.Phases[phase]
		if !ok || isInconclusive(s) || !(ph.P99 > 0) {
			continue
		}
		xy := plotter.XY{X: s.TargetRate, Y: ph.P99}
		pts.all = append(pts.all, xy)
		if openP99(ph) {
			pts.open = append(pts.open, xy)
			continue
		}
		low, high := ph.P99-ph.CI.P99[0], ph.CI.P99[1]-ph.P99
		if !(ph.CI.P99[0] > 0) || low < 0 { // no interval, or one the log scale cannot draw
			low = 0
		}
		pts.closed.XYs = append(pts.closed.XYs, xy)
		pts.closed.YErrors = append(pts.closed.YErrors, struct{ Low, High float64 }{low, max(high, 0)})
	}
	return pts
}

// openP99 reports whether a phase's P99 has no upper bound: too few samples
// for its interval, or a rank among commands never sent.
func openP99(ph messages.PhaseResult) bool {
	return ph.CI.P99.Open() || listed(ph.TooFew, nameP99) || listed(ph.Above, nameP99)
}

// extent is the lowest and highest y drawn, error bars included.
func (pts p99s) extent() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, xy := range pts.open {
		lo, hi = min(lo, xy.Y), max(hi, xy.Y)
	}
	for j, xy := range pts.closed.XYs {
		lo, hi = min(lo, xy.Y-pts.closed.YErrors[j].Low), max(hi, xy.Y+pts.closed.YErrors[j].High)
	}
	return lo, hi
}

// inconclusiveP99s are the P99s of every phase at the inconclusive steps.
func inconclusiveP99s(steps []messages.StepResult) plotter.XYs {
	var out plotter.XYs
	for _, s := range byRate(steps) {
		if !isInconclusive(s) {
			continue
		}
		for _, name := range phaseNames(s.Phases) {
			if v := s.Phases[name].P99; v > 0 && !math.IsInf(v, 0) {
				out = append(out, plotter.XY{X: s.TargetRate, Y: v})
			}
		}
	}
	return out
}

// addPhase draws a phase's line through all its points, its closed points in
// its colour with error bars, and its open points grey.
func addPhase(p *plot.Plot, name string, pts p99s, i int) error {
	c, shape := seriesColors[i%len(seriesColors)], plotutil.Shape(i)
	l, err := plotter.NewLine(pts.all)
	if err != nil {
		return fmt.Errorf("reporter: plot %s: %w", name, err)
	}
	l.Color = c
	p.Add(l)
	closed, err := addPoints(p, pts.closed.XYs, c, shape)
	if err != nil {
		return err
	}
	if _, err := addPoints(p, pts.open, invalidColor, shape); err != nil {
		return err
	}
	if closed != nil {
		p.Legend.Add(name, l, closed)
	} else {
		p.Legend.Add(name, l)
	}
	return addErrorBars(p, pts.closed, c)
}

// addPoints draws pts as glyphs and returns their scatter, nil if there are none.
func addPoints(p *plot.Plot, pts plotter.XYs, c color.Color, g draw.GlyphDrawer) (*plotter.Scatter, error) {
	if len(pts) == 0 {
		return nil, nil
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, fmt.Errorf("reporter: plot: %w", err)
	}
	s.Color, s.Shape = c, g
	p.Add(s)
	return s, nil
}

func addErrorBars(p *plot.Plot, pts errorPoints, c color.Color) error {
	if len(pts.XYs) == 0 {
		return nil
	}
	bars, err := plotter.NewYErrorBars(pts)
	if err != nil {
		return fmt.Errorf("reporter: plot: %w", err)
	}
	bars.Color = c
	p.Add(bars)
	return nil
}

// addKneeLines draws the knee as a dashed red vertical line, and the low end
// of a knee range as a dotted one.
func addKneeLines(p *plot.Plot, k *messages.Knee, lo, hi float64) error {
	if k == nil {
		return nil
	}
	l, err := plotter.NewLine(plotter.XYs{{X: k.Rate, Y: lo}, {X: k.Rate, Y: hi}})
	if err != nil {
		return fmt.Errorf("reporter: plot: %w", err)
	}
	l.Color, l.Dashes, l.Width = kneeColor, dashed, vg.Points(1.5)
	p.Add(l)
	p.Legend.Add(kneeLabel(k), l)
	if !(k.Low > 0) {
		return nil
	}
	low, err := plotter.NewLine(plotter.XYs{{X: k.Low, Y: lo}, {X: k.Low, Y: hi}})
	if err != nil {
		return fmt.Errorf("reporter: plot: %w", err)
	}
	low.Color, low.Dashes = kneeColor, []vg.Length{vg.Points(1), vg.Points(3)}
	p.Add(low)
	return nil
}
