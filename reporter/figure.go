package reporter

import (
	"cmp"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figure is one drawing of the report: a title, panels (plots) tiled in a
// grid with their axes aligned, and one legend below them. The legend sits
// outside the data so that it never hides a point, and one legend serves
// every panel of a small-multiples figure.
type Figure struct {
	// Title is drawn above the panels.
	Title string
	// Panels are rows of plots; nil leaves a tile empty.
	Panels [][]*plot.Plot
	// Width and PanelHeight size the figure: its height is the title's, a
	// panel's for each row and the legend's.
	Width, PanelHeight vg.Length
	// LegendColumns is how many columns the legend has; 0 means 2.
	LegendColumns int

	legend []legendEntry
}

// legendEntry is a name with its thumbnails, as plot.Legend takes them.
type legendEntry struct {
	name   string
	thumbs []plot.Thumbnailer
}

// legendAdder is what the plotting helpers name their series in: a
// figure's legend (or a plot's own, in tests).
type legendAdder interface {
	Add(name string, thumbs ...plot.Thumbnailer)
}

var _ legendAdder = (*Figure)(nil)

// Add names a series in the legend; a name already there is kept once, so
// every panel of a figure may add its series.
func (f *Figure) Add(name string, thumbs ...plot.Thumbnailer) {
	for _, e := range f.legend {
		if e.name == name {
			return
		}
	}
	f.legend = append(f.legend, legendEntry{name: name, thumbs: thumbs})
}

// Size is the figure's width and height.
func (f *Figure) Size() (w, h vg.Length) {
	return f.Width, f.titleHeight() + vg.Length(len(f.Panels))*f.PanelHeight + f.legendHeight()
}

// WriteTo draws the figure in format (png, svg, …; see draw.NewFormattedCanvas).
func (f *Figure) WriteTo(w io.Writer, format string) error {
	width, height := f.Size()
	c, err := draw.NewFormattedCanvas(width, height, format)
	if err != nil {
		return err
	}
	f.Draw(draw.New(c))
	_, err = c.WriteTo(w)
	return err
}

// Draw draws the title, the panels and the legend on c.
func (f *Figure) Draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	top, legendH := f.titleHeight(), f.legendHeight()
	title := titleStyle()
	c.FillText(title, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: c.Max.Y - top/2}, f.Title)
	mid := c
	mid.Max.Y -= top
	mid.Min.Y += legendH
	if rows := len(f.Panels); rows > 0 && len(f.Panels[0]) > 0 {
		tiles := draw.Tiles{Rows: rows, Cols: len(f.Panels[0]), PadX: vg.Points(8), PadY: vg.Points(6),
			PadLeft: vg.Points(4), PadRight: vg.Points(10)}
		canvases := plot.Align(f.Panels, tiles, mid)
		for j, row := range f.Panels {
			for i, p := range row {
				if p != nil {
					p.Draw(canvases[j][i])
				}
			}
		}
	}
	f.drawLegend(c, legendH)
}

func (f *Figure) legendColumns() int { return cmp.Or(f.LegendColumns, 2) }

// drawLegend draws the entries in columns, along the bottom of c.
func (f *Figure) drawLegend(c draw.Canvas, height vg.Length) {
	cols := f.legendColumns()
	perColumn := (len(f.legend) + cols - 1) / cols
	width := (c.Max.X - c.Min.X - 2*legendMargin) / vg.Length(cols)
	for col := 0; col*perColumn < len(f.legend); col++ {
		l := newFigureLegend()
		for _, e := range f.legend[col*perColumn : min(len(f.legend), (col+1)*perColumn)] {
			l.Add(e.name, e.thumbs...)
		}
		lc := c
		lc.Min.X = c.Min.X + legendMargin + vg.Length(col)*width
		lc.Max.X = lc.Min.X + width
		lc.Max.Y = c.Min.Y + height - legendMargin/2
		l.Draw(lc)
	}
}

// legendMargin is the space around the legend.
const legendMargin = vg.Length(12)

func newFigureLegend() plot.Legend {
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	l.TextStyle.Font.Size = vg.Points(10)
	l.Padding = vg.Points(2)
	l.ThumbnailWidth = vg.Points(24)
	return l
}

func (f *Figure) legendHeight() vg.Length {
	if len(f.legend) == 0 {
		return legendMargin
	}
	l := newFigureLegend()
	rows := (len(f.legend) + f.legendColumns() - 1) / f.legendColumns()
	return vg.Length(rows)*(l.TextStyle.Height("Xg")+l.Padding) + legendMargin
}

func (f *Figure) titleHeight() vg.Length { return 2 * titleStyle().Height("Xg") }

func titleStyle() text.Style {
	return text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, vg.Points(13)),
		XAlign: draw.XCenter, YAlign: draw.YCenter, Handler: plot.DefaultTextHandler}
}
