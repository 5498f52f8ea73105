package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/verdict"
)

// runShortArgs is a run of one short, low step: the tests check what run
// prints and writes, never the host's speed (the schedule lag is not judged).
var runShortArgs = []string{"--rates", "20", "--step-duration", "1s", "--accounts-count", "10", "--sessions", "4", "--saturation-lag", "1h"}

// TestRunOnTerminal runs `imapload run` in this process against the
// embedded IMAP server, as on a terminal: the plan comes before the first
// step, the progress line is redrawn in place, no INFO line reaches stderr
// (the log file has them), and the run ends with the table, the verdict
// and the report files, report.html included, with the verdict's exit
// code; its temporary NATS store is gone.
func TestRunOnTerminal(t *testing.T) {
	srv, err := embedded.StartIMAP(&embedded.IMAPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tmp, dir := t.TempDir(), filepath.Join(t.TempDir(), "report")
	t.Setenv("TMPDIR", tmp)
	logFile := filepath.Join(t.TempDir(), "run.log")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{"run", "--imap", srv.Addr(), "--producers", "2", "--out", dir, "--terminal", "yes", "--log-file", logFile}, runShortArgs...)
	out, errOut, err := runCLI(ctx, args...)
	checkRunEnd(t, out, err, dir)
	if !strings.Contains(out, "\r\033[K") {
		t.Errorf("--terminal yes: the progress line was not redrawn in place")
	}
	if strings.Contains(errOut, "level=INFO") {
		t.Errorf("--terminal yes: INFO lines on stderr:\n%s", tail(errOut, 10))
	}
	if b, err := os.ReadFile(logFile); err != nil || !strings.Contains(string(b), "level=INFO") {
		t.Errorf("--log-file %s: %v; want every line, INFO included", logFile, err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "imapload-run-nats-*")); len(left) > 0 {
		t.Errorf("run left its NATS store: %v", left)
	}
}

// checkRunEnd: a finished run printed its plan before its first step, then
// the table, the verdict and where the report files went (report.html
// among them), and exited with its report's verdict.
func checkRunEnd(t *testing.T, out string, err error, dir string) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("run stdout:\n%s", out)
		}
	})
	report := readReport(t, filepath.Join(dir, "report.json"))
	if got, want := exitCode(err), verdict.ExitCode(report); got != want {
		t.Errorf("run exit %d (%v), want %d, the code of its verdict %q", got, err, want, report.Verdict)
	}
	plan, first := strings.Index(out, "plan of run "), strings.Index(out, "step 1: ")
	if plan < 0 || first < 0 || plan > first {
		t.Errorf("plan at %d, first step at %d in stdout: want the plan first", plan, first)
	}
	for _, w := range []string{"STEP ", "verdict: ", "report files in " + dir + ":", "report.html"} {
		if !strings.Contains(out, w) {
			t.Errorf("run output lacks %q", w)
		}
	}
	checkReportFiles(t, dir)
}
