package reporter

import (
	"fmt"
	"image/color"
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
	}
	kneeColor     = color.RGBA{R: 200, G: 30, B: 30, A: 255}
	kneeBandColor = color.NRGBA{R: 200, G: 30, B: 30, A: 36}
	heldColor     = color.RGBA{R: 43, G: 138, B: 62, A: 255}
	invalidColor  = color.RGBA{R: 130, G: 130, B: 130, A: 255}
	guideColor    = color.RGBA{R: 160, G: 160, B: 160, A: 255}
	dashed        = []vg.Length{vg.Points(4), vg.Points(3)}
)

// throughputHeight is the height of the throughput plot's one panel.
const throughputHeight = 4.6 * vg.Inch

// PlotThroughput draws delivered against offered rate, one point per step in
// offered-rate order, with x ticks at the offered rates, both axes on a log
// scale when the rates grow geometrically: the y = x line (everything
// delivered), the threshold line, the knee ringed in red (its range shaded),
// the last held step ringed in green and inconclusive steps as hollow grey
// squares, named in the legend with their reason codes. The legend sits
// under the plot, off the data.
func PlotThroughput(r messages.RunReport) (*Figure, error) {
	fig := &Figure{Title: fmt.Sprintf("run %s%s: delivered vs offered rate", r.Run, verdictSuffix(r)), Width: plotWidth, PanelHeight: throughputHeight}
	p := newPanel("", "offered rate (commands/s)", "delivered rate (commands/s)")
	fig.Panels = [][]*plot.Plot{{p}}
	valid, invalid, top := ratePoints(r)
	if top == 0 {
		fig.Title += " (no steps yet)"
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
		return fig, nil
	}
	ax := newRateAxis(r.Steps, true)
	ax.log = ax.log && allDelivered(r.Steps)
	ax.apply(&p.X)
	ax.applyDelivered(&p.Y, r.Steps)
	if err := addGuides(p, fig, p.X.Min, p.X.Max, r.Threshold); err != nil {
		return nil, err
	}
	if err := addKneeBand(p, r.Knee, p.Y.Min, p.Y.Max); err != nil {
		return nil, err
	}
	if err := addLinePoints(p, fig, "delivered", valid, seriesColors[0], draw.CircleGlyph{}); err != nil {
		return nil, err
	}
	if err := addScatter(p, fig, inconclusiveLabel(r.Steps), invalid, invalidColor, draw.SquareGlyph{}, 4); err != nil {
		return nil, err
	}
	if err := addStepLabels(p, r.Steps, len(ax.rates) == 1); err != nil {
		return nil, err
	}
	if err := addHeldMark(p, fig, r.LastHeld); err != nil {
		return nil, err
	}
	return fig, addKneeMark(p, fig, r.Knee)
}

// addStepLabels writes each step's number beside its point, and its
// delivered rate too when there is one step (a lone point says little).
func addStepLabels(p *plot.Plot, steps []messages.StepResult, withValue bool) error {
	var xyl plotter.XYLabels
	for _, s := range steps {
		label := "step " + strconv.Itoa(s.Step)
		if withValue {
			label += ": " + rate(s.DeliveredRate) + "/s delivered"
		}
		xyl.XYs = append(xyl.XYs, plotter.XY{X: s.TargetRate, Y: s.DeliveredRate})
		xyl.Labels = append(xyl.Labels, label)
	}
	l, err := plotter.NewLabels(xyl)
	if err != nil {
		return fmt.Errorf("reporter: plot: %w", err)
	}
	l.Offset = vg.Point{X: vg.Points(7), Y: vg.Points(-12)}
	for i := range l.TextStyle {
		l.TextStyle[i].Font.Size = vg.Points(9)
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

// addGuides draws y = x and y = threshold·x across the x axis, lo to hi
// (straight lines on a log–log plot too).
func addGuides(p *plot.Plot, leg legendAdder, lo, hi, threshold float64) error {
	for _, g := range []struct {
		name  string
		slope float64
		dash  []vg.Length
	}{{"delivered = offered", 1, dashed}, {fmt.Sprintf("%s of offered (threshold)", percent(threshold)), threshold, []vg.Length{vg.Points(1), vg.Points(3)}}} {
		l, err := plotter.NewLine(plotter.XYs{{X: lo, Y: g.slope * lo}, {X: hi, Y: g.slope * hi}})
		if err != nil {
			return fmt.Errorf("reporter: plot: %w", err)
		}
		l.Color, l.Dashes = guideColor, g.dash
		p.Add(l)
		leg.Add(g.name, l)
	}
	return nil
}

func addKneeMark(p *plot.Plot, leg legendAdder, k *messages.Knee) error {
	if k == nil {
		return nil
	}
	pts := plotter.XYs{{X: k.Rate, Y: k.DeliveredRate}}
	return addScatter(p, leg, kneeLabel(k), pts, kneeColor, draw.RingGlyph{}, 8)
}

func addHeldMark(p *plot.Plot, leg legendAdder, h *messages.StepRef) error {
	if h == nil {
		return nil
	}
	pts := plotter.XYs{{X: h.Rate, Y: h.DeliveredRate}}
	label := fmt.Sprintf("last held: step %d at %s/s", h.Step, rate(h.Rate))
	return addScatter(p, leg, label, pts, heldColor, draw.RingGlyph{}, 8)
}

// addKneeBand shades the offered rates between the low end of a knee range
// and the knee, lo to hi on the y axis: the knee lies somewhere in there.
func addKneeBand(p *plot.Plot, k *messages.Knee, lo, hi float64) error {
	if k == nil || !(k.Low > 0) {
		return nil
	}
	band, err := plotter.NewPolygon(plotter.XYs{{X: k.Low, Y: lo}, {X: k.Rate, Y: lo}, {X: k.Rate, Y: hi}, {X: k.Low, Y: hi}})
	if err != nil {
		return fmt.Errorf("reporter: plot: %w", err)
	}
	band.Color, band.LineStyle.Width = kneeBandColor, 0
	p.Add(band)
	return nil
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

// newPanel is a plot with a grid and no legend of its own: the figure's
// legend, under the panels, names the series.
func newPanel(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	p.Add(plotter.NewGrid())
	return p
}

func addLinePoints(p *plot.Plot, leg legendAdder, name string, pts plotter.XYs, c color.Color, g draw.GlyphDrawer) error {
	if len(pts) == 0 {
		return nil
	}
	l, s, err := plotter.NewLinePoints(pts)
	if err != nil {
		return fmt.Errorf("reporter: plot %s: %w", name, err)
	}
	l.Color, s.Color, s.Shape, s.Radius = c, c, g, vg.Points(4)
	p.Add(l, s)
	leg.Add(name, l, s)
	return nil
}

func addScatter(p *plot.Plot, leg legendAdder, name string, pts plotter.XYs, c color.Color, g draw.GlyphDrawer, radius float64) error {
	if len(pts) == 0 {
		return nil
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return fmt.Errorf("reporter: plot %s: %w", name, err)
	}
	s.Color, s.Shape, s.Radius = c, g, vg.Points(radius)
	p.Add(s)
	leg.Add(name, s)
	return nil
}
