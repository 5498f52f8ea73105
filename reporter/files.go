package reporter

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/imapload/imapload/messages"
)

// Plot size in the PNG and SVG files.
const (
	plotWidth  = 8 * vg.Inch
	plotHeight = 5 * vg.Inch
)

// WriteFiles writes the report into dir (created if needed): report.json,
// report.csv, report.txt (the table), then the plots (see WritePlots). Each
// file is written to a temporary name and renamed, so a reader never sees a
// half-written report. It returns the paths written, also on error.
func WriteFiles(dir string, r messages.RunReport) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrWrite, err)
	}
	var paths []string
	for _, f := range []struct {
		name   string
		render func(io.Writer, messages.RunReport) error
	}{{"report.json", RenderJSON}, {"report.csv", RenderCSV}, {"report.txt", RenderTable}} {
		path, err := writeAtomic(dir, f.name, func(w io.Writer) error { return f.render(w, r) })
		if err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	more, err := WritePlots(dir, r)
	return append(paths, more...), err
}

// WritePlots writes throughput.png, throughput.svg, latency.png and
// latency.svg into dir (which must exist) and returns the paths written, also
// on error.
func WritePlots(dir string, r messages.RunReport) ([]string, error) {
	var paths []string
	for _, pl := range []struct {
		name string
		make func(messages.RunReport) (*plot.Plot, error)
	}{{"throughput", PlotThroughput}, {"latency", PlotLatency}} {
		p, err := pl.make(r)
		if err != nil {
			return paths, err
		}
		for _, format := range []string{"png", "svg"} {
			path, err := writeAtomic(dir, pl.name+"."+format, func(w io.Writer) error { return renderPlot(w, p, format) })
			if err != nil {
				return paths, err
			}
			paths = append(paths, path)
		}
	}
	return paths, nil
}

func renderPlot(w io.Writer, p *plot.Plot, format string) error {
	wt, err := p.WriterTo(plotWidth, plotHeight, format)
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

// writeAtomic renders into memory, then writes dir/name through a temporary
// file and a rename.
func writeAtomic(dir, name string, render func(io.Writer) error) (string, error) {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrWrite, name, err)
	}
	path := filepath.Join(dir, name)
	tmp, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrWrite, err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	_, err = tmp.Write(buf.Bytes())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrWrite, path, err)
	}
	return path, nil
}
