package reporter

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/imapload/imapload/messages"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenCases are the hand-made reports compared with testdata/<name>_<format>.golden.
var goldenCases = []struct {
	name    string
	report  func() messages.RunReport
	formats []string
}{
	{name: "report", report: oldReport, formats: []string{"table", "wide", "json", "csv"}},
	{name: "host_overloaded", report: hostReport, formats: []string{"table", "wide", "csv"}},
	{name: "failing", report: failingReport, formats: []string{"table", "wide", "csv"}},
	{name: "knee_range", report: rangeReport, formats: []string{"table", "wide", "csv"}},
	{name: "open", report: openReport, formats: []string{"table", "wide", "json", "csv"}},
	{name: "busy_demo", report: busyDemoReport, formats: []string{"table", "wide"}},
}

var renderers = map[string]func(io.Writer, messages.RunReport) error{
	"table": RenderTable, "wide": RenderWideTable, "json": RenderJSON, "csv": RenderCSV,
}

// TestRenderGolden renders each golden report with its renderers and
// compares with testdata (go test -run Golden -update rewrites them).
func TestRenderGolden(t *testing.T) {
	for _, c := range goldenCases {
		for _, format := range c.formats {
			t.Run(c.name+"/"+format, func(t *testing.T) {
				var buf bytes.Buffer
				if err := renderers[format](&buf, c.report()); err != nil {
					t.Fatalf("Render %s(%s) error = %v", format, c.name, err)
				}
				checkGolden(t, filepath.Join("testdata", c.name+"_"+format+".golden"), buf.Bytes())
			})
		}
	}
}

// TestRenderEmptyGolden renders a report of no steps.
func TestRenderEmptyGolden(t *testing.T) {
	var buf bytes.Buffer
	for _, render := range []func(io.Writer, messages.RunReport) error{RenderTable, RenderJSON, RenderCSV} {
		if err := render(&buf, emptyReport()); err != nil {
			t.Fatalf("Render(empty) error = %v", err)
		}
	}
	checkGolden(t, filepath.Join("testdata", "empty.golden"), buf.Bytes())
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("write %s: %v", path, err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v (run go test -update to create it)", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test -run Golden -update rewrites it)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
