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

// TestRenderGolden renders the golden report with each text renderer and
// compares with testdata/<name>.golden (go test -run Golden -update rewrites them).
func TestRenderGolden(t *testing.T) {
	rep := Build("golden", goldenSteps(), DefaultThreshold, fixedNow)
	tests := []struct {
		name   string
		render func(io.Writer, messages.RunReport) error
	}{
		{name: "table", render: RenderTable},
		{name: "json", render: RenderJSON},
		{name: "csv", render: RenderCSV},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.render(&buf, rep); err != nil {
				t.Fatalf("Render %s error = %v", tt.name, err)
			}
			checkGolden(t, filepath.Join("testdata", "report_"+tt.name+".golden"), buf.Bytes())
		})
	}
}

// TestRenderEmptyGolden renders a report of no steps.
func TestRenderEmptyGolden(t *testing.T) {
	rep := Build("empty", nil, 0, fixedNow)
	var buf bytes.Buffer
	for _, render := range []func(io.Writer, messages.RunReport) error{RenderTable, RenderJSON, RenderCSV} {
		if err := render(&buf, rep); err != nil {
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
