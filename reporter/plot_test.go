package reporter

import (
	"bytes"
	"errors"
	"html"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"gonum.org/v1/plot"

	"github.com/imapload/imapload/messages"
)

func TestWritePlots(t *testing.T) {
	tests := []struct {
		name   string
		report messages.RunReport
	}{
		{name: "golden ramp", report: oldReport()},
		{name: "no steps", report: emptyReport()},
		{name: "steps without latencies", report: handReport("plots", kneeSteps([]st{{step: 1, ratio: 1}, {step: 2, ratio: 0.5}}), nil)},
		{name: "every step saturated", report: handReport("plots", kneeSteps([]st{{step: 1, ratio: 1, saturated: true}}), nil)},
		{name: "host overloaded", report: hostReport()},
		{name: "failing", report: failingReport()},
		{name: "knee range", report: rangeReport()},
		{name: "open intervals", report: openReport()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			paths, err := WritePlots(dir, tt.report)
			if err != nil {
				t.Fatalf("WritePlots() error = %v", err)
			}
			want := []string{"throughput.png", "throughput.svg", "latency.png", "latency.svg"}
			for i := range want {
				want[i] = filepath.Join(dir, want[i])
			}
			if !slices.Equal(paths, want) {
				t.Fatalf("WritePlots() = %v, want %v", paths, want)
			}
			for _, p := range paths {
				checkImage(t, p)
			}
		})
	}
}

// TestPlotLegends reads the legends off the SVGs: inconclusive steps named
// with their reasons, the knee as a range, open P99s set apart.
func TestPlotLegends(t *testing.T) {
	tests := []struct {
		name   string
		plot   func(messages.RunReport) (*plot.Plot, error)
		report messages.RunReport
		want   []string
	}{
		{name: "throughput, host overloaded", plot: PlotThroughput, report: hostReport(), want: []string{"inconclusive (host_overloaded)", "run host (inconclusive)"}},
		{name: "throughput, old saturated step", plot: PlotThroughput, report: oldReport(), want: []string{"inconclusive (generator_saturated)", "knee: step 4 at 2000/s"}},
		{name: "latency, knee range", plot: PlotLatency, report: rangeReport(),
			want: []string{"inconclusive (generator_stalled, rate_mismatch)", "knee: between 1000 and 2000/s (step 4)"}},
		{name: "latency, open intervals", plot: PlotLatency, report: openReport(), want: []string{openLabel, "run open (no knee)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.plot(tt.report)
			if err != nil {
				t.Fatalf("plot(%s) error = %v", tt.report.Run, err)
			}
			var buf bytes.Buffer
			if err := renderPlot(&buf, p, "svg"); err != nil {
				t.Fatalf("renderPlot() error = %v", err)
			}
			for _, w := range tt.want {
				if !bytes.Contains(buf.Bytes(), []byte(html.EscapeString(w))) {
					t.Errorf("plot(%s) SVG lacks legend %q", tt.report.Run, w)
				}
			}
		})
	}
}

// TestP99Points: an open P99 is drawn apart, without error bars, and the
// plot's range stays finite.
func TestP99Points(t *testing.T) {
	steps := openReport().Steps
	fetch, login := p99Points(steps, "fetch"), p99Points(steps, "login")
	if len(fetch.all) != 2 || len(fetch.open) != 2 || len(fetch.closed.XYs) != 0 {
		t.Errorf("p99Points(fetch) = %d points, %d open, %d closed, want 2, 2, 0", len(fetch.all), len(fetch.open), len(fetch.closed.XYs))
	}
	if len(login.open) != 1 || len(login.closed.XYs) != 1 {
		t.Errorf("p99Points(login) = %d open, %d closed, want 1 and 1", len(login.open), len(login.closed.XYs))
	}
	for _, pts := range []p99s{fetch, login} {
		if lo, hi := pts.extent(); math.IsInf(lo, 0) || math.IsInf(hi, 0) || !(lo > 0) {
			t.Errorf("p99s.extent() = %v, %v, want finite and positive", lo, hi)
		}
	}
}

func checkImage(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	switch filepath.Ext(path) {
	case ".png":
		if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) || len(b) < 1000 {
			t.Errorf("%s: %d bytes without a PNG header", path, len(b))
		}
	case ".svg":
		if !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("</svg>")) {
			t.Errorf("%s: %d bytes without an <svg> root", path, len(b))
		}
	}
}

func TestWriteFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out", "golden")
	paths, err := WriteFiles(dir, oldReport())
	if err != nil {
		t.Fatalf("WriteFiles() error = %v", err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
		if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
			t.Errorf("WriteFiles() wrote %s: size %v, err %v", p, fi, err)
		}
	}
	want := []string{"report.json", "report.csv", "report.txt", "throughput.png", "throughput.svg", "latency.png", "latency.svg"}
	if !slices.Equal(names, want) {
		t.Errorf("WriteFiles() names = %v, want %v", names, want)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(want) {
		t.Errorf("WriteFiles() left %d entries in %s (temporary files?), want %d", len(entries), dir, len(want))
	}
	table, _ := os.ReadFile(filepath.Join(dir, "report.txt"))
	golden, _ := os.ReadFile(filepath.Join("testdata", "report_table.golden"))
	if !bytes.Equal(table, golden) {
		t.Errorf("WriteFiles() report.txt differs from testdata/report_table.golden")
	}
}

func TestWriteFilesError(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := WriteFiles(filepath.Join(file, "sub"), emptyReport())
	if !errors.Is(err, ErrWrite) {
		t.Errorf("WriteFiles(under a file) error = %v, want ErrWrite", err)
	}
}
