package reporter

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// bandAlpha is the opacity of an interval band: light enough that three
// bands and the knee's shading stay readable where they overlap.
const bandAlpha = 56

// addPercentile draws one percentile of a phase: a line and a band through
// each run of consecutive measured points, a bar at a lone one, its glyphs,
// and the points that are not measurements as grey rings off the line.
// withValues writes each value beside its point (a run of one step).
func addPercentile(p *plot.Plot, leg legendAdder, pc latencyPct, pts []pctPoint, withValues bool) error {
	var measured, other plotter.XYs
	for _, run := range supportedRuns(pts) {
		if err := addRun(p, pc, run); err != nil {
			return err
		}
		for _, pt := range run {
			measured = append(measured, pt.XY)
		}
	}
	for _, pt := range pts {
		if !pt.supported {
			other = append(other, pt.XY)
		}
	}
	if err := addPctLegend(p, leg, pc, measured); err != nil {
		return err
	}
	if err := addScatter(p, leg, unsupportedLabel, other, invalidColor, draw.RingGlyph{}, 4); err != nil {
		return err
	}
	if withValues {
		return addValueLabels(p, append(measured, other...), pc.label)
	}
	return nil
}

// supportedRuns splits pts at the points that are not measurements: a line
// drawn through them would pass them off as measured.
func supportedRuns(pts []pctPoint) [][]pctPoint {
	var runs [][]pctPoint
	var run []pctPoint
	for _, pt := range pts {
		if pt.supported {
			run = append(run, pt)
			continue
		}
		if len(run) > 0 {
			runs = append(runs, run)
		}
		run = nil
	}
	if len(run) > 0 {
		runs = append(runs, run)
	}
	return runs
}

// addRun draws a run's band (its interval) and line, or a bar for a lone point.
func addRun(p *plot.Plot, pc latencyPct, run []pctPoint) error {
	if len(run) == 1 {
		return addIntervalBar(p, pc.col, run[0])
	}
	var band, line plotter.XYs
	for _, pt := range run {
		line = append(line, pt.XY)
	}
	for _, pt := range run {
		if !pt.hasInterval() {
			band = nil
			break
		}
		band = append(band, plotter.XY{X: pt.X, Y: pt.low})
	}
	for i := len(run) - 1; i >= 0 && band != nil; i-- {
		band = append(band, plotter.XY{X: run[i].X, Y: run[i].high})
	}
	if band != nil {
		poly, err := plotter.NewPolygon(band)
		if err != nil {
			return fmt.Errorf("reporter: plot %s: %w", pc.label, err)
		}
		poly.Color, poly.LineStyle.Width = translucent(pc.col), 0
		p.Add(poly)
	}
	l, err := plotter.NewLine(line)
	if err != nil {
		return fmt.Errorf("reporter: plot %s: %w", pc.label, err)
	}
	l.Color, l.Width = pc.col, vg.Points(1.5)
	p.Add(l)
	return nil
}

// addIntervalBar draws a lone point's interval as an error bar.
func addIntervalBar(p *plot.Plot, c color.Color, pt pctPoint) error {
	if !pt.hasInterval() {
		return nil
	}
	bars, err := plotter.NewYErrorBars(errorPoints{XYs: plotter.XYs{pt.XY},
		YErrors: plotter.YErrors{{Low: max(pt.Y-pt.low, 0), High: max(pt.high-pt.Y, 0)}}})
	if err != nil {
		return fmt.Errorf("reporter: plot: %w", err)
	}
	bars.Color, bars.CapWidth = c, vg.Points(8)
	p.Add(bars)
	return nil
}

// errorPoints are points with offsets below and above.
type errorPoints struct {
	plotter.XYs
	plotter.YErrors
}

// addPctLegend draws the measured glyphs and names the percentile (line and
// glyph), once per figure.
func addPctLegend(p *plot.Plot, leg legendAdder, pc latencyPct, measured plotter.XYs) error {
	glyphs := measured
	if len(glyphs) == 0 {
		glyphs = plotter.XYs{{X: 1, Y: 1}} // a legend thumbnail only
	}
	s, err := plotter.NewScatter(glyphs)
	if err != nil {
		return fmt.Errorf("reporter: plot %s: %w", pc.label, err)
	}
	s.Color, s.Shape, s.Radius = pc.col, pc.shape, vg.Points(3)
	if len(measured) > 0 {
		p.Add(s)
	}
	l, err := plotter.NewLine(plotter.XYs{{X: 1, Y: 1}, {X: 2, Y: 2}}) // a legend thumbnail only
	if err != nil {
		return fmt.Errorf("reporter: plot: %w", err)
	}
	l.Color, l.Width = pc.col, vg.Points(1.5)
	leg.Add(pc.label, l, s)
	return nil
}

// addIntervalLegend names the interval bands, after the percentiles.
func addIntervalLegend(leg legendAdder) error {
	band, err := plotter.NewPolygon(plotter.XYs{{X: 1, Y: 1}, {X: 2, Y: 1}, {X: 2, Y: 2}})
	if err != nil {
		return fmt.Errorf("reporter: plot: %w", err)
	}
	band.Color, band.LineStyle.Width = translucent(invalidColor), 0
	leg.Add(intervalLabel, band)
	return nil
}

// addValueLabels writes each point's value beside it.
func addValueLabels(p *plot.Plot, pts plotter.XYs, name string) error {
	xyl := plotter.XYLabels{XYs: pts}
	for _, xy := range pts {
		xyl.Labels = append(xyl.Labels, name+" "+ms(xy.Y)+" ms")
	}
	l, err := plotter.NewLabels(xyl)
	if err != nil {
		return fmt.Errorf("reporter: plot: %w", err)
	}
	l.Offset = vg.Point{X: vg.Points(7), Y: vg.Points(-4)}
	for i := range l.TextStyle {
		l.TextStyle[i].Font.Size = vg.Points(8)
	}
	p.Add(l)
	return nil
}

func translucent(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: bandAlpha}
}
