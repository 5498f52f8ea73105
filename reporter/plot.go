package reporter

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
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
// line, the knee ringed in red and inconclusive steps as hollow grey squares,
// named in the legend with their reason codes.
func PlotThroughput(r messages.RunReport) (*plot.Plot, error) {
	p := newPlot(fmt.Sprintf("run %s%s: delivered vs offered rate", r.Run, verdictSuffix(r)), "offered rate (commands/s)", "delivered rate (commands/s)")
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
	if err := addScatter(p, inconclusiveLabel(r.Steps), invalid, invalidColor, draw.SquareGlyph{}, 4); err != nil {
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

// ratePoints returns the conclusive and inconclusive steps as (offered,
// delivered) points in offered-rate order, and the largest rate on either axis.
func ratePoints(r messages.RunReport) (valid, invalid plotter.XYs, top float64) {
	for _, s := range byRate(r.Steps) {
		xy := plotter.XY{X: s.TargetRate, Y: s.DeliveredRate}
		if isInconclusive(s) {
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
	return addScatter(p, kneeLabel(k), pts, kneeColor, draw.RingGlyph{}, 7)
}

// verdictSuffix names the run's verdict in a plot title: " (no knee)".
func verdictSuffix(r messages.RunReport) string {
	if v := runVerdict(r); v != "" {
		return " (" + strings.ReplaceAll(v, "_", " ") + ")"
	}
	return ""
}

// kneeLabel names the knee in a legend, as a range when it is one.
func kneeLabel(k *messages.Knee) string {
	if k.Low > 0 {
		return fmt.Sprintf("knee: between %s and %s/s (step %d)", rate(k.Low), rate(k.Rate), k.Step)
	}
	return fmt.Sprintf("knee: step %d at %s/s", k.Step, rate(k.Rate))
}

// inconclusiveLabel names the inconclusive steps in a legend, with the codes
// of their reasons.
func inconclusiveLabel(steps []messages.StepResult) string {
	var bad []*messages.StepResult
	for i := range steps {
		if isInconclusive(&steps[i]) {
			bad = append(bad, &steps[i])
		}
	}
	if codes := reasonCodes(bad); len(codes) > 0 {
		return "inconclusive (" + strings.Join(codes, ", ") + ")"
	}
	return "inconclusive"
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
