package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/reporter"
	"github.com/imapload/imapload/verdict"
)

// TestCompare compares a run read from the results stream with one from a
// report.json file and one from a report folder, in time order, and
// writes the three comparison files.
func TestCompare(t *testing.T) {
	t.Parallel()
	ns, js := resultsBus(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	ramp := func(run string, at time.Time, ratios ...float64) []messages.StepResult {
		var out []messages.StepResult
		for i, ratio := range ratios {
			s := tailStep(i+1, float64(int(100)<<i), ratio, 0)
			s.Run, s.Generated = run, at
			out = append(out, s)
		}
		return out
	}
	for _, s := range ramp("late", t0.Add(2*time.Hour), 1, 1, 1, 0.5) { // knee in (400, 800]
		data, _ := json.Marshal(s)
		if _, err := js.Publish(ctx, messages.ResultsSubject("late"), data); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	write := func(path string, rep messages.RunReport) {
		data, _ := json.Marshal(rep)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "early.json"), reporter.Build("early", ramp("early", t0, 1, 0.5), 0, t0))                       // knee in (100, 200]
	write(filepath.Join(dir, "mid", "report.json"), reporter.Build("mid", ramp("mid", t0.Add(time.Hour), 1, 1, 0.5), 0, t0)) // (200, 400]

	out := filepath.Join(dir, "cmp")
	text, _, err := runCLI(ctx, "compare", "--nats", ns.ClientURL(), "--out", out,
		"late", filepath.Join(dir, "early.json"), filepath.Join(dir, "mid"))
	if err != nil {
		t.Fatalf("imapload compare = %v\n%s", err, text)
	}
	early, mid, late := strings.Index(text, "\nearly "), strings.Index(text, "\nmid "), strings.Index(text, "\nlate ")
	if early < 0 || !(early < mid && mid < late) || !strings.Contains(text, "(200, 400]/s  higher") || !strings.Contains(text, "(400, 800]/s  higher") {
		t.Errorf("imapload compare printed:\n%s\nwant early, mid, late in time order, each knee higher", text)
	}
	for _, name := range []string{"compare.txt", "compare.json", "compare.html"} {
		if st, err := os.Stat(filepath.Join(out, name)); err != nil || st.Size() == 0 {
			t.Errorf("--out: %s: %v", name, err)
		}
	}
	if want := "comparison files in " + out + ":\n  compare.txt, compare.json, compare.html"; !strings.Contains(text, want) {
		t.Errorf("imapload compare --out printed:\n%s\nwant it to say where the files went: %q", text, want)
	}
	jsonOut := filepath.Join(dir, "cmp-json")
	stdout, stderr, err := runCLI(ctx, "compare", "--json", "--out", jsonOut, filepath.Join(dir, "early.json"), filepath.Join(dir, "mid"))
	if err != nil || !json.Valid([]byte(stdout)) || !strings.Contains(stderr, "comparison files in "+jsonOut+":\n  compare.txt") {
		t.Errorf("imapload compare --json --out = %v; stdout (want JSON alone):\n%s\nstderr (want where the files went):\n%s", err, stdout, stderr)
	}
	html, _ := os.ReadFile(filepath.Join(out, "compare.html"))
	if !strings.Contains(string(html), "<svg") || !strings.Contains(string(html), "(400, 800]/s") {
		t.Errorf("compare.html lacks the knee chart")
	}

	_, _, err = runCLI(ctx, "compare", "--nats", ns.ClientURL(), "nosuchrun")
	if err == nil || !strings.Contains(err.Error(), "run nosuchrun: no step result") {
		t.Errorf("imapload compare nosuchrun = %v, want an error naming the run", err)
	}
	_, _, err = runCLI(ctx, "compare", "--nats", unreachableNATS)
	if exitCode(err) != verdict.ExitUsage {
		t.Errorf("imapload compare (no argument) = %v, want a usage error", err)
	}
}
