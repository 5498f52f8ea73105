package reporter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/reporter"
)

// within bounds every wait of these tests.
const within = 10 * time.Second

func TestNew(t *testing.T) {
	nc := new(nats.Conn) // New does no I/O
	tests := []struct {
		name    string
		nc      *nats.Conn
		run     string
		opts    *reporter.Options
		wantErr bool
	}{
		{name: "defaults", nc: nc, run: "r1"},
		{name: "every run", nc: nc, run: "", opts: &reporter.Options{Threshold: 0.8}},
		{name: "threshold 1", nc: nc, run: "r1", opts: &reporter.Options{Threshold: 1}},
		{name: "nil connection", run: "r1", wantErr: true},
		{name: "run not a subject token", nc: nc, run: "r.1", wantErr: true},
		{name: "negative threshold", nc: nc, run: "r1", opts: &reporter.Options{Threshold: -0.1}, wantErr: true},
		{name: "threshold above 1", nc: nc, run: "r1", opts: &reporter.Options{Threshold: 1.5}, wantErr: true},
		{name: "NaN threshold", nc: nc, run: "r1", opts: &reporter.Options{Threshold: math.NaN()}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := reporter.New(tt.nc, tt.run, tt.opts)
			if tt.wantErr {
				if !errors.Is(err, reporter.ErrInvalidOptions) || r != nil {
					t.Errorf("New() = %v, %v, want nil and ErrInvalidOptions", r, err)
				}
				return
			}
			if err != nil || r == nil {
				t.Errorf("New() = %v, %v, want a reporter", r, err)
			}
		})
	}
}

// TestReporterPublishesKnee plays the aggregator: three step results before
// the reporter starts, two after, plus two bad messages. The reporter must
// publish a report naming the knee, write its files and keep going.
func TestReporterPublishesKnee(t *testing.T) {
	nc, js := startNATS(t)
	for _, s := range ramp("r1")[:3] {
		publishResult(t, js, s)
	}
	publishRaw(t, js, messages.ResultsSubject("r1"), []byte(`{"kind":"step_result","run":`))
	dir, out := t.TempDir(), new(bytes.Buffer)
	r, stop := start(t, nc, "r1", &reporter.Options{OutDir: dir, Out: out})
	for _, s := range ramp("r1")[3:] {
		publishResult(t, js, s)
	}
	wrongRun := ramp("other")[0]
	publishRaw(t, js, messages.ResultsSubject("r1"), mustJSON(t, wrongRun))

	rep, raw := waitPublishedMsg(t, js, "r1", func(rep messages.RunReport) bool { return len(rep.Steps) == 5 })
	if got := raw.Header.Get(messages.SummaryHeader); got != rep.Summary() || !strings.Contains(got, "knee at 4000/s (step 4)") {
		t.Errorf("published report %s = %q, want its Summary() naming the knee", messages.SummaryHeader, got)
	}
	if rep.Knee == nil || rep.Knee.Step != 4 || rep.LastHeld == nil || rep.LastHeld.Step != 2 || fmt.Sprint(rep.Invalid) != "[3]" {
		t.Errorf("published report: knee %+v, last held %+v, invalid %v, want step 4, step 2, [3]", rep.Knee, rep.LastHeld, rep.Invalid)
	}
	testkit.WaitFor(t, within, "the bad messages to be counted", func() bool { return r.Stats().Invalid == 2 })
	if err := stop(); err != nil {
		t.Fatalf("Run() = %v, want nil after cancel", err)
	}
	if st := r.Stats(); st.Results != 5 || st.PublishErrors != 0 || st.WriteErrors != 0 {
		t.Errorf("Stats() = %+v, want 5 results and no errors", st)
	}
	if got, ok := r.Report("r1"); !ok || got.Knee == nil || got.Knee.Step != 4 {
		t.Errorf("Report(r1) = knee %+v, %v, want step 4", got.Knee, ok)
	}
	checkFiles(t, dir, 4)
	if !strings.Contains(out.String(), "knee:      between 3000 and 4000/s: step 3 was inconclusive; step 4 at 4000/s offered") {
		t.Errorf("Out lacks the knee line; got:\n%s", out.String())
	}
	// Quiet by default: a line per step as it is read, the table once, on exit.
	if n := strings.Count(out.String(), "knee: "); n != 1 || !strings.Contains(out.String(), "run r1 step 5: ") {
		t.Errorf("Out has the table %d times and lines %q…; want a line per step and the table once:\n%s", n, "run r1 step 5: ", out.String())
	}
	checkUpdates(t, r, 4)
}

// TestReporterEveryRun reads every run and writes each into its own folder.
func TestReporterEveryRun(t *testing.T) {
	nc, js := startNATS(t)
	dir := t.TempDir()
	r, stop := start(t, nc, "", &reporter.Options{OutDir: dir})
	for _, run := range []string{"a", "b"} {
		for _, s := range ramp(run)[:2] {
			publishResult(t, js, s)
		}
	}
	for _, run := range []string{"a", "b"} {
		testkit.WaitFor(t, within, "the report of run "+run, func() bool {
			rep, ok := r.Report(run)
			return ok && len(rep.Steps) == 2
		})
	}
	if err := stop(); err != nil {
		t.Fatalf("Run() = %v, want nil after cancel", err)
	}
	for _, run := range []string{"a", "b"} {
		checkFiles(t, filepath.Join(dir, run), 0)
	}
}

// TestReporterRestart starts a second reporter on the same stream: it
// rebuilds the same report and publishes nothing, the stream already holding
// a report of these results. A new result is then reported again.
func TestReporterRestart(t *testing.T) {
	nc, js := startNATS(t)
	r1, stop1 := start(t, nc, "r1", nil)
	for _, s := range ramp("r1") {
		publishResult(t, js, s)
	}
	waitPublished(t, js, "r1", func(rep messages.RunReport) bool { return len(rep.Steps) == 5 })
	if err := stop1(); err != nil {
		t.Fatalf("Run() = %v", err)
	}
	before := subjectMsgs(t, js, "r1")
	r2, stop2 := start(t, nc, "r1", nil)
	testkit.WaitFor(t, within, "the second reporter's report", func() bool { _, ok := r2.Report("r1"); return ok })
	if after := subjectMsgs(t, js, "r1"); after != before || r2.Stats().Published != 0 {
		t.Errorf("after a restart: %d messages on %s, %d published, want %d and 0", after, messages.ResultsSubject("r1"), r2.Stats().Published, before)
	}
	a, _ := r1.Report("r1")
	b, _ := r2.Report("r1")
	a.Generated, b.Generated = time.Time{}, time.Time{}
	if !bytes.Equal(mustJSON(t, a), mustJSON(t, b)) {
		t.Errorf("Report() after a restart differs from the first reporter's")
	}
	redo := ramp("r1")[4]
	redo.DeliveredRate, redo.Ratio = 4900, 0.98 // the aggregator republishes step 5
	publishResult(t, js, redo)
	waitPublished(t, js, "r1", func(rep messages.RunReport) bool { return rep.Steps[4].Ratio == 0.98 })
	if err := stop2(); err != nil {
		t.Fatalf("Run() = %v", err)
	}
}

func TestRunErrors(t *testing.T) {
	nc, _ := startNATS(t)
	r, err := reporter.New(nc, "r1", nil)
	if err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.Run(cancelled); err != nil {
		t.Errorf("Run(cancelled) = %v, want nil", err)
	}
	if err := r.Run(context.Background()); !errors.Is(err, reporter.ErrInvalidOptions) {
		t.Errorf("second Run() = %v, want ErrInvalidOptions", err)
	}

	closed, _ := startNATS(t)
	closed.Close()
	r, _ = reporter.New(closed, "r1", nil)
	ctx, cancelRun := context.WithTimeout(context.Background(), within)
	defer cancelRun()
	if err := r.Run(ctx); !errors.Is(err, bus.ErrSetup) {
		t.Errorf("Run(closed connection) = %v, want bus.ErrSetup", err)
	}
	if _, open := <-r.Updates(); open {
		t.Errorf("Updates() still open after Run returned")
	}
}

// ramp is five step results of run: step 3 saturated, the knee at step 4.
func ramp(run string) []messages.StepResult {
	ratios := []float64{1, 0.98, 0.7, 0.8, 0.6}
	out := make([]messages.StepResult, len(ratios))
	for i, ratio := range ratios {
		target := 1000 * float64(i+1)
		out[i] = messages.StepResult{Kind: messages.KindStepResult, Run: run, Step: i + 1,
			TargetRate: target, DeliveredRate: ratio * target, Ratio: ratio, Complete: true,
			Duration: messages.Duration(time.Second), Producers: []string{"p1"}, GeneratorSaturated: i == 2,
			Phases: map[string]messages.PhaseResult{"fetch": {Count: 100, Percentiles: messages.Percentiles{P50: 1, P99: float64(i + 1)}}}}
	}
	return out
}

func checkFiles(t *testing.T, dir string, kneeStep int) {
	t.Helper()
	for _, name := range []string{"report.json", "report.csv", "report.txt", "throughput.png", "throughput.svg", "latency.png", "latency.svg"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
			t.Errorf("file %s: %v", filepath.Join(dir, name), err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		return
	}
	var rep messages.RunReport
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatalf("report.json: %v", err)
	}
	if got := kneeOf(rep); got != kneeStep {
		t.Errorf("report.json knee = step %d, want %d (0 = none)", got, kneeStep)
	}
}

func checkUpdates(t *testing.T, r *reporter.Reporter, kneeStep int) {
	t.Helper()
	var last messages.RunReport
	n := 0
	for rep := range r.Updates() { // closed by Run
		last, n = rep, n+1
	}
	if n == 0 || kneeOf(last) != kneeStep {
		t.Errorf("Updates() sent %d reports, the last with knee step %d, want some and step %d", n, kneeOf(last), kneeStep)
	}
}

func kneeOf(rep messages.RunReport) int {
	if rep.Knee == nil {
		return 0
	}
	return rep.Knee.Step
}
