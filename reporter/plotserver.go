package reporter

import (
	"fmt"
	"io"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/imapload/imapload/messages"
)

// serverPanelHeight is the height of each of the server plot's panels.
const serverPanelHeight = 3.2 * vg.Inch

// serverResources are the resources the server plot draws, in its order.
var serverResources = []string{resCPU, resDisk, resMemory, resWorkers}

// hasServer reports whether a step of r carries server figures.
func hasServer(r messages.RunReport) bool {
	return slices.ContainsFunc(r.Steps, func(s messages.StepResult) bool { return s.Server != nil })
}

// PlotServer draws the server beside its throughput, both against the
// offered rate: above, the delivered rate (y = x, everything delivered);
// below, how busy each of the server's resources was (CPU, disk, memory,
// the embedded server's workers; the busiest host's at each step), with
// the saturation line at 90%. The knee is shaded or ringed on both.
func PlotServer(r messages.RunReport) (*Figure, error) {
	fig := &Figure{Title: fmt.Sprintf("run %s%s: the server against the offered rate", r.Run, verdictSuffix(r)), Width: plotWidth, PanelHeight: serverPanelHeight}
	top := newPanel("", "", "delivered (commands/s)")
	low := newPanel("", "offered rate (commands/s)", "busy (% of capacity)")
	fig.Panels = [][]*plot.Plot{{top}, {low}}
	if len(r.Steps) == 0 {
		fig.Title += " (no steps yet)"
		top.X.Min, top.X.Max, low.X.Min, low.X.Max = 0, 1, 0, 1
		return fig, nil
	}
	ax := newRateAxis(r.Steps, true)
	ax.log = ax.log && allDelivered(r.Steps)
	ax.apply(&top.X)
	ax.applyDelivered(&top.Y, r.Steps)
	ax.apply(&low.X)
	low.Y.Min, low.Y.Max = 0, 110
	if err := addGuides(top, fig, top.X.Min, top.X.Max, r.Threshold); err != nil {
		return nil, err
	}
	valid, _, _ := ratePoints(r)
	if err := addLinePoints(top, fig, "delivered", valid, seriesColors[0], draw.CircleGlyph{}); err != nil {
		return nil, err
	}
	if err := addKneeMark(top, fig, r.Knee); err != nil {
		return nil, err
	}
	return fig, addUsage(low, fig, r)
}

// addUsage draws each resource's busy share per step, and the line of 90%.
func addUsage(p *plot.Plot, leg legendAdder, r messages.RunReport) error {
	if err := addKneeBand(p, r.Knee, p.Y.Min, p.Y.Max); err != nil {
		return err
	}
	line, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: 100 * saturatedUse}, {X: p.X.Max, Y: 100 * saturatedUse}})
	if err != nil {
		return fmt.Errorf("reporter: plot: %w", err)
	}
	line.Color, line.Dashes = kneeColor, dashed
	p.Add(line)
	leg.Add(fmt.Sprintf("saturated (%s)", percent(saturatedUse)), line)
	glyphs := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PlusGlyph{}}
	for i, name := range serverResources {
		var pts plotter.XYs
		for _, s := range byRate(r.Steps) {
			if res, ok := busiest(s.Server, name); ok {
				pts = append(pts, plotter.XY{X: s.TargetRate, Y: 100 * res.used})
			}
		}
		label := name + " busy"
		if name == resMemory {
			label = "memory used"
		}
		if err := addLinePoints(p, leg, label, pts, seriesColors[i%len(seriesColors)], glyphs[i]); err != nil {
			return err
		}
	}
	return nil
}

// serverHTMLPlot is the server plot for the page, nil when no step has
// server figures.
func serverHTMLPlot(r messages.RunReport) (*htmlPlot, error) {
	if !hasServer(r) {
		return nil, nil
	}
	fig, err := PlotServer(r)
	if err != nil {
		return nil, err
	}
	svg, err := inlineSVG(fig)
	if err != nil {
		return nil, err
	}
	return &htmlPlot{Title: "The server's resources against offered rate", SVG: svg}, nil
}

// writeServerPlot writes server.png and server.svg into dir when a step
// has server figures, and returns the paths written.
func writeServerPlot(dir string, r messages.RunReport) ([]string, error) {
	if !hasServer(r) {
		return nil, nil
	}
	fig, err := PlotServer(r)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, format := range []string{"png", "svg"} {
		path, err := writeAtomic(dir, "server."+format, func(w io.Writer) error { return fig.WriteTo(w, format) })
		if err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}
