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
		{name: "doubling rates", report: doublingReport()},
		{name: "one step", report: singleReport()},
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

// TestPlotLegends reads the legends and labels off the SVGs: inconclusive
// steps named with their reasons, the knee as a range, the last held step,
// unsupported percentiles set apart, a lone step's values written out.
func TestPlotLegends(t *testing.T) {
	tests := []struct {
		name   string
		plot   func(messages.RunReport) (*Figure, error)
		report messages.RunReport
		want   []string
	}{
		{name: "throughput, host overloaded", plot: PlotThroughput, report: hostReport(), want: []string{"inconclusive (host_overloaded)", "run host (inconclusive)", "last held: step 2 at 1000/s"}},
		{name: "throughput, old saturated step", plot: PlotThroughput, report: oldReport(), want: []string{"inconclusive (generator_saturated)", "knee: step 4 at 2000/s"}},
		{name: "throughput, one step", plot: PlotThroughput, report: singleReport(), want: []string{"step 1: 199/s delivered"}},
		{name: "latency, knee range", plot: PlotLatency, report: rangeReport(),
			want: []string{"inconclusive (generator_stalled, rate_mismatch)", "knee: between 1000 and 2000/s (step 4)", "P50", "P90", "P99", intervalLabel}},
		{name: "latency, open intervals", plot: PlotLatency, report: openReport(), want: []string{unsupportedLabel, "run open (no knee)"}},
		{name: "latency, one step", plot: PlotLatency, report: singleReport(), want: []string{"P99 9.00 ms", "P50 0.300 ms"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fig, err := tt.plot(tt.report)
			if err != nil {
				t.Fatalf("plot(%s) error = %v", tt.report.Run, err)
			}
			var buf bytes.Buffer
			if err := fig.WriteTo(&buf, "svg"); err != nil {
				t.Fatalf("Figure.WriteTo() error = %v", err)
			}
			for _, w := range tt.want {
				if !bytes.Contains(buf.Bytes(), []byte(html.EscapeString(w))) {
					t.Errorf("plot(%s) SVG lacks %q", tt.report.Run, w)
				}
			}
		})
	}
}

// TestPctPoints: a percentile with too few samples, among commands never
// sent or with an open interval is not a measurement, and no line joins it.
func TestPctPoints(t *testing.T) {
	steps := openReport().Steps
	p99 := latencyPcts[2]
	fetch, login := pctPoints(steps, "fetch", p99), pctPoints(steps, "login", p99)
	if len(fetch) != 2 || fetch[0].supported || fetch[1].supported {
		t.Errorf("pctPoints(fetch, P99) = %+v, want 2 points, neither supported", fetch)
	}
	if len(login) != 2 || login[0].supported || !login[1].supported {
		t.Errorf("pctPoints(login, P99) = %+v, want step 1 unsupported, step 2 supported", login)
	}
	if runs := supportedRuns(fetch); len(runs) != 0 {
		t.Errorf("supportedRuns(fetch) = %d runs, want 0", len(runs))
	}
	pts := []pctPoint{{supported: true}, {supported: true}, {}, {supported: true}}
	if runs := supportedRuns(pts); len(runs) != 2 || len(runs[0]) != 2 || len(runs[1]) != 1 {
		t.Errorf("supportedRuns(yes, yes, no, yes) = %v, want runs of 2 and 1", runs)
	}
	if lo, hi := latencyExtent(steps, allPhases(steps)); math.IsInf(lo, 0) || math.IsInf(hi, 0) || !(lo > 0) {
		t.Errorf("latencyExtent() = %v, %v, want finite and positive", lo, hi)
	}
}

// TestRateAxis: ticks at the offered rates, log when they grow geometrically.
func TestRateAxis(t *testing.T) {
	tests := []struct {
		name    string
		report  messages.RunReport
		wantLog bool
		rates   []float64
	}{
		{name: "linear ramp", report: oldReport(), rates: []float64{500, 1000, 1500, 2000, 2500}},
		{name: "doubling", report: doublingReport(), wantLog: true, rates: []float64{100, 200, 400, 800, 1600}},
		{name: "one step", report: singleReport(), rates: []float64{200}},
		{name: "two steps", report: openReport(), rates: []float64{10, 20}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newRateAxis(tt.report.Steps, false)
			if a.log != tt.wantLog || !slices.Equal(a.rates, tt.rates) {
				t.Errorf("newRateAxis() = log %v, rates %v, want %v, %v", a.log, a.rates, tt.wantLog, tt.rates)
			}
			var ticks []float64
			for _, tk := range rateTicks(a.rates, maxRateLabels) {
				ticks = append(ticks, tk.Value)
			}
			if !slices.Equal(ticks, tt.rates) || !(a.min < tt.rates[0]) || !(a.max > tt.rates[len(tt.rates)-1]) {
				t.Errorf("rateTicks() = %v in [%v, %v], want ticks at %v inside the range", ticks, a.min, a.max, tt.rates)
			}
		})
	}
}

func TestLatencyTicks(t *testing.T) {
	var labels []string
	for _, tk := range (latencyTicks{}).Ticks(0.15, 60) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	want := []string{"0.2", "0.5", "1", "2", "5", "10", "20", "50"}
	if !slices.Equal(labels, want) {
		t.Errorf("latencyTicks.Ticks(0.15, 60) labels = %v, want %v", labels, want)
	}
}

// TestPlotLatencyPanels: one panel per phase, at most four to a row.
func TestPlotLatencyPanels(t *testing.T) {
	eight := singleReport()
	for _, name := range []string{"dial", "list", "select", "store", "append", "logout"} {
		eight.Steps[0].Phases[name] = phaseResult(100, 0, 1, 5)
	}
	for _, tt := range []struct {
		report     messages.RunReport
		rows, cols int
	}{{oldReport(), 1, 4}, {rangeReport(), 1, 2}, {eight, 2, 4}} {
		fig, err := PlotLatency(tt.report)
		if err != nil {
			t.Fatalf("PlotLatency(%s) error = %v", tt.report.Run, err)
		}
		if len(fig.Panels) != tt.rows || len(fig.Panels[0]) != tt.cols {
			t.Errorf("PlotLatency(%s) = %d×%d panels, want %d×%d", tt.report.Run, len(fig.Panels), len(fig.Panels[0]), tt.rows, tt.cols)
		}
	}
}

// doublingReport is a ramp that doubles its rate, as the demo's does, with
// the knee at step 4.
func doublingReport() messages.RunReport {
	var steps []messages.StepResult
	for i, r := range []float64{100, 200, 400, 800, 1600} {
		v, d := messages.VerdictHeld, r
		if r >= 800 {
			v, d = messages.VerdictBelow, 575
		}
		steps = append(steps, simpleStep(i+1, r, d, v))
	}
	knee := &messages.Knee{Step: 4, Rate: 800, DeliveredRate: 575, Ratio: 0.72, Threshold: DefaultThreshold}
	r := handReport("doubling", steps, knee)
	r.LastHeld = &messages.StepRef{Step: 3, Rate: 400, DeliveredRate: 400, Ratio: 1}
	r.Verdict = messages.RunKnee
	return r
}

// singleReport is a run of one step that held.
func singleReport() messages.RunReport {
	r := handReport("single", []messages.StepResult{simpleStep(1, 200, 199, messages.VerdictHeld)}, nil)
	r.LastHeld = &messages.StepRef{Step: 1, Rate: 200, DeliveredRate: 199, Ratio: 0.995}
	r.Verdict = messages.RunNoKnee
	return r
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
	want := []string{"report.json", "report.csv", "report.txt", "report.html", "throughput.png", "throughput.svg", "latency.png", "latency.svg"}
	if !slices.Equal(names, want) {
		t.Errorf("WriteFiles() names = %v, want %v", names, want)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(want) {
		t.Errorf("WriteFiles() left %d entries in %s (temporary files?), want %d", len(entries), dir, len(want))
	}
	table, _ := os.ReadFile(filepath.Join(dir, "report.txt"))
	golden, _ := os.ReadFile(filepath.Join("testdata", "report_wide.golden"))
	if !bytes.Equal(table, golden) {
		t.Errorf("WriteFiles() report.txt differs from testdata/report_wide.golden (the wide table)")
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

// TestRateTicksLabels: a small panel labels a few of the rates, first and
// then evenly, and ticks them all.
func TestRateTicksLabels(t *testing.T) {
	var labels []string
	ticks := rateTicks([]float64{100, 200, 400, 800, 1600}, maxPanelRateLabels)
	for _, tk := range ticks {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if want := []string{"100", "400", "1600"}; len(ticks) != 5 || !slices.Equal(labels, want) {
		t.Errorf("rateTicks(5 rates, %d) = %d ticks labelled %v, want 5 labelled %v", maxPanelRateLabels, len(ticks), labels, want)
	}
}
