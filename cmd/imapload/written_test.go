package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/reporter"
)

// TestFinishSaysWhere: the table a ramp and the demo end with fits 120
// columns (every column with --wide), and the report files are named with
// their folder, made absolute.
func TestFinishSaysWhere(t *testing.T) {
	steps := []messages.StepResult{tailStep(1, 100, 1, 0), tailStep(2, 200, 0.5, 0)}
	steps[1].Verdict = messages.VerdictBelow
	report := reporter.Build("t1", steps, 0, time.Now())
	t.Chdir(t.TempDir())
	for _, wide := range []bool{false, true} {
		var out strings.Builder
		if err := finish(&out, &rampFlags{Out: "report", Wide: wide}, report); err != nil {
			t.Fatalf("finish(wide %v) error = %v", wide, err)
		}
		abs, _ := filepath.Abs("report")
		want := "report files in " + abs + ":\n  report.json, report.csv, report.txt, report.html, throughput.png"
		if !strings.Contains(out.String(), want) {
			t.Errorf("finish(wide %v) printed:\n%s\nwant %q", wide, out.String(), want)
		}
		if got := strings.Contains(out.String(), "P99.9 ms"); got != wide {
			t.Errorf("finish(wide %v) table has P99.9: %v, want %v:\n%s", wide, got, wide, out.String())
		}
		for _, l := range strings.Split(out.String(), "\n") {
			if n := utf8.RuneCountInString(l); !wide && n > reporter.TableWidth {
				t.Errorf("finish() line of %d columns, want ≤ %d: %s", n, reporter.TableWidth, l)
			}
		}
	}
}

// TestReporterSaysWhere: `imapload reporter --out` says where the report
// files go as it starts, and again when it stops, once they are written.
func TestReporterSaysWhere(t *testing.T) {
	t.Parallel()
	ns, js := resultsBus(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	data, _ := json.Marshal(tailStep(1, 100, 1, 0))
	if _, err := js.Publish(ctx, messages.ResultsSubject("t1"), data); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rep := startCLI(t, "reporter", "reporter", "--run", "t1", "--out", dir, "--nats", ns.ClientURL())
	rep.waitMatch(t, regexp.MustCompile(`report files in `+regexp.QuoteMeta(dir)+` .*: rewritten after each step result`), 10*time.Second)
	testkit.WaitFor(t, 10*time.Second, "report.json", func() bool {
		_, err := os.Stat(filepath.Join(dir, "report.json"))
		return err == nil
	})
	if err := rep.stop(t, 10*time.Second); err != nil {
		t.Fatalf("imapload reporter = %v", err)
	}
	if want := "report files in " + dir + " (report.json, report.csv, report.txt, report.html, plots): written"; !strings.Contains(rep.stdout.String(), want) {
		t.Errorf("imapload reporter printed:\n%s\nwant at its end %q", rep.stdout.String(), want)
	}
}
