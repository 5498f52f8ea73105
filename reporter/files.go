package reporter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot/vg"

	"github.com/imapload/imapload/messages"
)

// plotWidth is the throughput plot's width in the PNG and SVG files.
const plotWidth = 8 * vg.Inch

// WriteFiles writes the report into dir (created if needed): report.json,
// report.csv, report.txt (the table), report.html (see RenderHTML), then the
// plots (see WritePlots). Each
// file is written to a temporary name and renamed, so a reader never sees a
// half-written report. Modes are the umask's (0666 and 0777 less the umask),
// so a private umask keeps the report private. It returns the paths written,
// also on error.
func WriteFiles(dir string, r messages.RunReport) ([]string, error) {
	if err := os.MkdirAll(dir, 0o777); err != nil { // the umask decides, as for files
		return nil, fmt.Errorf("%w: %v", ErrWrite, err)
	}
	var paths []string
	for _, f := range []struct {
		name   string
		render func(io.Writer, messages.RunReport) error
	}{{"report.json", RenderJSON}, {"report.csv", RenderCSV}, {"report.txt", RenderWideTable}, {"report.html", RenderHTML}} {
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
// latency.svg (and server.png and server.svg when a step has server
// figures, see PlotServer) into dir (which must exist) and returns the paths written, also
// on error.
func WritePlots(dir string, r messages.RunReport) ([]string, error) {
	var paths []string
	for _, pl := range []struct {
		name string
		make func(messages.RunReport) (*Figure, error)
	}{{"throughput", PlotThroughput}, {"latency", PlotLatency}} {
		p, err := pl.make(r)
		if err != nil {
			return paths, err
		}
		for _, format := range []string{"png", "svg"} {
			path, err := writeAtomic(dir, pl.name+"."+format, func(w io.Writer) error { return p.WriteTo(w, format) })
			if err != nil {
				return paths, err
			}
			paths = append(paths, path)
		}
	}
	more, err := writeServerPlot(dir, r) // server.png and .svg, when a step has server figures
	return append(paths, more...), err
}

// createTemp creates a new file beside dir/name with mode 0666 less the umask:
// os.CreateTemp would make it 0600 whatever the umask.
func createTemp(dir, name string) (*os.File, error) {
	for range 100 {
		path := filepath.Join(dir, "."+name+"."+strconv.FormatUint(rand.Uint64(), 36)+".tmp")
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("no free temporary name for %s in %s", name, dir)
}

// writeAtomic renders into memory, then writes dir/name through a temporary
// file and a rename.
func writeAtomic(dir, name string, render func(io.Writer) error) (string, error) {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrWrite, name, err)
	}
	path := filepath.Join(dir, name)
	tmp, err := createTemp(dir, name)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrWrite, err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	_, err = tmp.Write(buf.Bytes())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrWrite, path, err)
	}
	return path, nil
}
