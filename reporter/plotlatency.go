package reporter

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/imapload/imapload/messages"
)

// The latency figure: small panels of this size, at most this many a row.
const (
	latencyWidth    = 10 * vg.Inch
	panelHeight     = 2.8 * vg.Inch
	maxPanelColumns = 4
)

// Legend labels of the latency figure.
const (
	unsupportedLabel = "not measured: too few samples, never sent, open interval"
	intervalLabel    = "95% interval (a bar at a lone point)"
)

// latencyPct is a percentile the latency panels draw.
type latencyPct struct {
	name, label string // as in PhaseResult.TooFew; as in the legend
	col         color.Color
	shape       draw.GlyphDrawer
	get         func(messages.PhaseResult) (float64, messages.Interval)
}

// latencyPcts are P50, P90 and P99: the median, the usual, the tail.
var latencyPcts = []latencyPct{
	{nameP50, "P50", seriesColors[0], draw.CircleGlyph{}, func(p messages.PhaseResult) (float64, messages.Interval) { return p.P50, p.CI.P50 }},
	{nameP90, "P90", seriesColors[1], draw.PyramidGlyph{}, func(p messages.PhaseResult) (float64, messages.Interval) { return p.P90, p.CI.P90 }},
	{nameP99, "P99", seriesColors[3], draw.BoxGlyph{}, func(p messages.PhaseResult) (float64, messages.Interval) { return p.P99, p.CI.P99 }},
}

// PlotLatency draws small multiples: one panel per phase, each with the
// response-time P50, P90 and P99 against the offered rate (ticks at the
// offered rates, log when they grow geometrically) on a log scale shared
// by every panel, each percentile with its 95% interval as a band. A
// percentile that is not a measurement with two bounds (too few samples,
// a rank among commands never sent, an open interval) is a grey ring off
// the lines; inconclusive steps are hollow grey squares; the knee is a
// dashed red line, its range shaded. One legend, under the panels, names it all.
func PlotLatency(r messages.RunReport) (*Figure, error) {
	fig := &Figure{Title: fmt.Sprintf("run %s%s: response time per phase (ms, log scale)", r.Run, verdictSuffix(r)), Width: latencyWidth, PanelHeight: panelHeight}
	phases := allPhases(r.Steps)
	lo, hi := latencyExtent(r.Steps, phases)
	if math.IsInf(lo, 0) {
		fig.Title += " (no latencies yet)"
		p := newPanel("", "offered rate (commands/s)", "response time (ms)")
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
		fig.Panels = [][]*plot.Plot{{p}}
		return fig, nil
	}
	ax := newRateAxis(r.Steps, false)
	ax.labels = maxPanelRateLabels
	cols := min(len(phases), maxPanelColumns)
	fig.Panels = make([][]*plot.Plot, (len(phases)+cols-1)/cols)
	for i := range fig.Panels {
		fig.Panels[i] = make([]*plot.Plot, cols)
	}
	for i, name := range phases {
		p, err := phasePanel(r, fig, ax, name, lo, hi)
		if err != nil {
			return nil, err
		}
		if i+cols >= len(phases) { // the lowest panel of its column
			// Short and small: a label wider than the panel would narrow them all.
			p.X.Label.Text, p.X.Label.TextStyle.Font.Size = "offered (commands/s)", vg.Points(10)
		}
		fig.Panels[i/cols][i%cols] = p
	}
	return fig, nil
}

// phasePanel draws one phase's percentiles on a panel whose y axis spans
// lo to hi, the extent of every phase.
func phasePanel(r messages.RunReport, leg legendAdder, ax rateAxis, name string, lo, hi float64) (*plot.Plot, error) {
	p := newPanel(name, "", "")
	p.Title.TextStyle.Font.Size = vg.Points(11)
	ax.apply(&p.X)
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, latencyTicks{}
	p.Y.Min, p.Y.Max = lo/1.5, hi*1.5
	if err := addKneeBand(p, r.Knee, p.Y.Min, p.Y.Max); err != nil {
		return nil, err
	}
	for _, pc := range latencyPcts {
		if err := addPercentile(p, leg, pc, pctPoints(r.Steps, name, pc), len(ax.rates) == 1); err != nil {
			return nil, err
		}
	}
	if err := addIntervalLegend(leg); err != nil {
		return nil, err
	}
	if err := addScatter(p, leg, inconclusiveLabel(r.Steps), inconclusivePcts(r.Steps, name), invalidColor, draw.SquareGlyph{}, 4); err != nil {
		return nil, err
	}
	return p, addKneeLine(p, leg, r.Knee, p.Y.Min, p.Y.Max)
}

// pctPoint is a percentile at a step, with its 95% interval.
type pctPoint struct {
	plotter.XY
	low, high float64
	// supported is false when the value is not a measurement with two bounds.
	supported bool
}

// hasInterval reports whether the point's interval can be drawn on a log scale.
func (pt pctPoint) hasInterval() bool {
	return pt.low > 0 && pt.high >= pt.low && !math.IsInf(pt.high, 0)
}

// pctPoints are a phase's values of percentile pc at the conclusive steps,
// in offered-rate order; a phase without a value (none, or none served) is
// left out.
func pctPoints(steps []messages.StepResult, phase string, pc latencyPct) []pctPoint {
	var out []pctPoint
	for _, s := range byRate(steps) {
		ph, ok := s.Phases[phase]
		if !ok || isInconclusive(s) {
			continue
		}
		v, iv := pc.get(ph)
		if !(v > 0) || math.IsInf(v, 0) {
			continue
		}
		out = append(out, pctPoint{XY: plotter.XY{X: s.TargetRate, Y: v}, low: iv[0], high: iv[1], supported: !unsupported(ph, pc.name, iv)})
	}
	return out
}

// inconclusivePcts are the percentiles of a phase at the inconclusive steps.
func inconclusivePcts(steps []messages.StepResult, phase string) plotter.XYs {
	var out plotter.XYs
	for _, s := range byRate(steps) {
		ph, ok := s.Phases[phase]
		if !ok || !isInconclusive(s) {
			continue
		}
		for _, pc := range latencyPcts {
			if v, _ := pc.get(ph); v > 0 && !math.IsInf(v, 0) {
				out = append(out, plotter.XY{X: s.TargetRate, Y: v})
			}
		}
	}
	return out
}

// latencyExtent is the lowest and highest value any panel draws, intervals
// included; +Inf and -Inf when there is none.
func latencyExtent(steps []messages.StepResult, phases []string) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, name := range phases {
		for _, pc := range latencyPcts {
			for _, pt := range pctPoints(steps, name, pc) {
				lo, hi = min(lo, pt.Y), max(hi, pt.Y)
				if pt.supported && pt.hasInterval() {
					lo, hi = min(lo, pt.low), max(hi, pt.high)
				}
			}
		}
		for _, xy := range inconclusivePcts(steps, name) {
			lo, hi = min(lo, xy.Y), max(hi, xy.Y)
		}
	}
	return lo, hi
}

// addKneeLine draws the knee as a dashed red vertical line.
func addKneeLine(p *plot.Plot, leg legendAdder, k *messages.Knee, lo, hi float64) error {
	if k == nil {
		return nil
	}
	l, err := plotter.NewLine(plotter.XYs{{X: k.Rate, Y: lo}, {X: k.Rate, Y: hi}})
	if err != nil {
		return fmt.Errorf("reporter: plot: %w", err)
	}
	l.Color, l.Dashes, l.Width = kneeColor, dashed, vg.Points(1.5)
	p.Add(l)
	leg.Add(kneeLabel(k), l)
	return nil
}
