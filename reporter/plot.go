package reporter

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/imapload/imapload/messages"
)

var (
	// seriesColors are distinct dark colours without red, which marks the knee.
	seriesColors = []color.Color{
		color.RGBA{R: 24, G: 90, B: 169, A: 255}, color.RGBA{G: 140, B: 72, A: 255},
		color.RGBA{R: 244, G: 125, B: 35, A: 255}, color.RGBA{R: 102, G: 44, B: 145, A: 255},
		color.RGBA{R: 180, G: 56, B: 148, A: 255}, color.RGBA{G: 150, B: 160, A: 255},
		color.RGBA{R: 140, G: 90, B: 40, A: 255}, color.RGBA{R: 60, G: 60, B: 60, A: 255},
	}
	kneeColor    = color.RGBA{R: 200, G: 30, B: 30, A: 255}
	invalidColor = color.RGBA{R: 130, G: 130, B: 130, A: 255}
	guideColor   = color.RGBA{R: 160, G: 160, B: 160, A: 255}
	dashed       = []vg.Length{vg.Points(4), vg.Points(3)}
)

// PlotThroughput draws delivered against offered rate, one point per step in
// offered-rate order: the y = x line (everything delivered), the threshold
// line, the knee ringed in red and saturated-generator steps as grey crosses.
func PlotThroughput(r messages.RunReport) (*plot.Plot, error) {
	p := newPlot(fmt.Sprintf("run %s: delivered vs offered rate", r.Run), "offered rate (commands/s)", "delivered rate (commands/s)")
	p.X.Min, p.Y.Min = 0, 0
	valid, invalid, top := ratePoints(r)
	if top == 0 {
		p.Title.Text += " (no steps yet)"
		p.X.Max, p.Y.Max = 1, 1
		return p, nil
	}
	p.X.Max, p.Y.Max = niceCeil(1.05*top), niceCeil(1.05*top)
	if err := addGuides(p, p.X.Max, r.Threshold); err != nil {
		return nil, err
	}
	if err := addLinePoints(p, "delivered", valid, seriesColors[0], draw.CircleGlyph{}); err != nil {
		return nil, err
	}
	if err := addScatter(p, "generator saturated (invalid)", invalid, invalidColor, draw.CrossGlyph{}, 4); err != nil {
		return nil, err
	}
	if err := addStepLabels(p, r.Steps); err != nil {
		return nil, err
	}
	return p, addKneeMark(p, r.Knee)
}

// addStepLabels writes each step's number beside its point.
func addStepLabels(p *plot.Plot, steps []messages.StepResult) error {
	var xyl plotter.XYLabels
	for _, s := range steps {
		xyl.XYs = append(xyl.XYs, plotter.XY{X: s.TargetRate, Y: s.DeliveredRate})
		xyl.Labels = append(xyl.Labels, "step "+strconv.Itoa(s.Step))
	}
	l, err := plotter.NewLabels(xyl)
	if err != nil {
		return fmt.Errorf("reporter: plot: %w", err)
	}
	l.Offset = vg.Point{X: vg.Points(6), Y: vg.Points(-12)}
	for i := range l.TextStyle {
		l.TextStyle[i].Font.Size = vg.Points(8)
		l.TextStyle[i].Color = invalidColor
	}
	p.Add(l)
	return nil
}

// ratePoints returns the valid and invalid steps as (offered, delivered)
// points in offered-rate order, and the largest rate on either axis.
func ratePoints(r messages.RunReport) (valid, invalid plotter.XYs, top float64) {
	for _, s := range byRate(r.Steps) {
		xy := plotter.XY{X: s.TargetRate, Y: s.DeliveredRate}
		if s.GeneratorSaturated {
			invalid = append(invalid, xy)
		} else {
			valid = append(valid, xy)
		}
		top = max(top, s.TargetRate, s.DeliveredRate)
	}
	return valid, invalid, top
}

// addGuides draws y = x and y = threshold·x from 0 to top.
func addGuides(p *plot.Plot, top, threshold float64) error {
	for _, g := range []struct {
		name  string
		slope float64
		dash  []vg.Length
	}{{"delivered = offered", 1, dashed}, {fmt.Sprintf("%s of offered (threshold)", percent(threshold)), threshold, []vg.Length{vg.Points(1), vg.Points(3)}}} {
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: top, Y: g.slope * top}})
		if err != nil {
			return fmt.Errorf("reporter: plot: %w", err)
		}
		l.Color, l.Dashes = guideColor, g.dash
		p.Add(l)
		p.Legend.Add(g.name, l)
	}
	return nil
}

func addKneeMark(p *plot.Plot, k *messages.Knee) error {
	if k == nil {
		return nil
	}
	pts := plotter.XYs{{X: k.Rate, Y: k.DeliveredRate}}
	if err := addScatter(p, fmt.Sprintf("knee: step %d at %s/s", k.Step, rate(k.Rate)), pts, kneeColor, draw.RingGlyph{}, 7); err != nil {
		return err
	}
	return nil
}

// PlotLatency draws the response-time P99 of each phase against the offered
// rate on a log scale, with the P99's 95% interval as error bars and the knee
// as a dashed red vertical line. Saturated-generator steps are left out.
func PlotLatency(r messages.RunReport) (*plot.Plot, error) {
	p := newPlot(fmt.Sprintf("run %s: P99 response time per phase", r.Run), "offered rate (commands/s)", "P99 response time (ms, log scale)")
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, name := range allPhases(r.Steps) {
		pts := p99Points(r.Steps, name)
		if len(pts.XYs) == 0 {
			continue
		}
		for j, xy := range pts.XYs {
			lo, hi = min(lo, xy.Y-pts.YErrors[j].Low), max(hi, xy.Y+pts.YErrors[j].High)
		}
		if err := addPhase(p, name, pts, i); err != nil {
			return nil, err
		}
	}
	if math.IsInf(lo, 0) {
		p.Title.Text += " (no latencies yet)"
		return p, nil
	}
	// Room below the lowest point, and a decade above the highest for the legend.
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	p.Y.Min, p.Y.Max = lo/1.5, hi*10
	if err := addInvalidLines(p, r, p.Y.Min, p.Y.Max); err != nil {
		return nil, err
	}
	return p, addKneeLine(p, r.Knee, p.Y.Min, p.Y.Max)
}

// addInvalidLines draws a grey dotted vertical line at each
// saturated-generator step, whose latencies are left out.
func addInvalidLines(p *plot.Plot, r messages.RunReport, lo, hi float64) error {
	var first *plotter.Line
	for _, s := range r.Steps {
		if !s.GeneratorSaturated {
			continue
		}
		l, err := plotter.NewLine(plotter.XYs{{X: s.TargetRate, Y: lo}, {X: s.TargetRate, Y: hi}})
		if err != nil {
			return fmt.Errorf("reporter: plot: %w", err)
		}
		l.Color, l.Dashes = invalidColor, []vg.Length{vg.Points(1), vg.Points(3)}
		p.Add(l)
		first = cmp.Or(first, l)
	}
	if first != nil {
		p.Legend.Add("generator saturated ("+stepsWord(r.Invalid)+", left out)", first)
	}
	return nil
}

// p99s are P99 points with their 95% interval as offsets below and above;
// a lower offset never reaches zero, which the log scale cannot draw.
type p99s struct {
	plotter.XYs
	plotter.YErrors
}

func p99Points(steps []messages.StepResult, phase string) p99s {
	var pts p99s
	for _, s := range byRate(steps) {
		ph, ok := s.Phases[phase]
		if !ok || s.GeneratorSaturated || !(ph.P99 > 0) {
			continue
		}
		low, high := ph.P99-ph.CI.P99[0], ph.CI.P99[1]-ph.P99
		if !(ph.CI.P99[0] > 0) || low < 0 { // no interval, or one the log scale cannot draw
			low = 0
		}
		pts.XYs = append(pts.XYs, plotter.XY{X: s.TargetRate, Y: ph.P99})
		pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{low, max(high, 0)})
	}
	return pts
}

func addPhase(p *plot.Plot, name string, pts p99s, i int) error {
	c := seriesColors[i%len(seriesColors)]
	if err := addLinePoints(p, name, pts.XYs, c, plotutil.Shape(i)); err != nil {
		return err
	}
	bars, err := plotter.NewYErrorBars(pts)
	if err != nil {
		return fmt.Errorf("reporter: plot: %w", err)
	}
	bars.Color = c
	p.Add(bars)
	return nil
}

func addKneeLine(p *plot.Plot, k *messages.Knee, lo, hi float64) error {
	if k == nil {
		return nil
	}
	l, err := plotter.NewLine(plotter.XYs{{X: k.Rate, Y: lo}, {X: k.Rate, Y: hi}})
	if err != nil {
		return fmt.Errorf("reporter: plot: %w", err)
	}
	l.Color, l.Dashes, l.Width = kneeColor, dashed, vg.Points(1.5)
	p.Add(l)
	p.Legend.Add(fmt.Sprintf("knee: step %d at %s/s", k.Step, rate(k.Rate)), l)
	return nil
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())
	return p
}

func addLinePoints(p *plot.Plot, name string, pts plotter.XYs, c color.Color, g draw.GlyphDrawer) error {
	if len(pts) == 0 {
		return nil
	}
	l, s, err := plotter.NewLinePoints(pts)
	if err != nil {
		return fmt.Errorf("reporter: plot %s: %w", name, err)
	}
	l.Color, s.Color, s.Shape = c, c, g
	p.Add(l, s)
	p.Legend.Add(name, l, s)
	return nil
}

func addScatter(p *plot.Plot, name string, pts plotter.XYs, c color.Color, g draw.GlyphDrawer, radius float64) error {
	if len(pts) == 0 {
		return nil
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return fmt.Errorf("reporter: plot %s: %w", name, err)
	}
	s.Color, s.Shape, s.Radius = c, g, vg.Points(radius)
	p.Add(s)
	p.Legend.Add(name, s)
	return nil
}

// niceCeil rounds v > 0 up to a multiple of half its power of ten (2625 →
// 3000), so that the axis gets round ticks.
func niceCeil(v float64) float64 {
	half := math.Pow(10, math.Floor(math.Log10(v))) / 2
	return math.Ceil(v/half) * half
}
