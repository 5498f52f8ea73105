package reporter

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/imapload/imapload/messages"
)

func TestWritePlots(t *testing.T) {
	tests := []struct {
		name  string
		steps []messages.StepResult
	}{
		{name: "golden ramp", steps: goldenSteps()},
		{name: "no steps"},
		{name: "steps without latencies", steps: kneeSteps([]st{{step: 1, ratio: 1}, {step: 2, ratio: 0.5}})},
		{name: "every step saturated", steps: kneeSteps([]st{{step: 1, ratio: 1, saturated: true}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			paths, err := WritePlots(dir, Build("plots", tt.steps, 0, fixedNow))
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
	paths, err := WriteFiles(dir, Build("golden", goldenSteps(), 0, fixedNow))
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
	_, err := WriteFiles(filepath.Join(file, "sub"), Build("r", nil, 0, fixedNow))
	if !errors.Is(err, ErrWrite) {
		t.Errorf("WriteFiles(under a file) error = %v, want ErrWrite", err)
	}
}
