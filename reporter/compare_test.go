package reporter

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
)

// compareReport is a run that held up to held/s and fell below at knee/s
// (0: no knee), with a fetch P99 of p99 ms ± 5% at the last held step.
func compareReport(run string, at time.Time, held, knee, p99 float64) messages.RunReport {
	step := func(n int, r, ratio float64) messages.StepResult {
		return messages.StepResult{Kind: messages.KindStepResult, Run: run, Step: n, TargetRate: r, OfferedRate: r,
			DeliveredRate: r * ratio, Ratio: ratio, Complete: true, Producers: []string{"p1"}, Generated: at,
			Phases: map[string]messages.PhaseResult{"fetch": {Count: 5000, Percentiles: messages.Percentiles{P99: p99},
				CI: messages.Intervals{P99: messages.Interval{p99 * 0.95, p99 * 1.05}}}}}
	}
	steps := []messages.StepResult{step(1, held/2, 1), step(2, held, 1)}
	if knee > 0 {
		steps = append(steps, step(3, knee, 0.5))
	}
	return Build(run, steps, 0, at)
}

func TestCompare(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	c := Compare([]messages.RunReport{
		compareReport("r3", t0.Add(2*time.Hour), 800, 1600, 10.2), // same rate as r2, overlapping P99
		compareReport("r1", t0, 400, 800, 10),
		compareReport("r2", t0.Add(time.Hour), 800, 1600, 10),
		compareReport("r4", t0.Add(3*time.Hour), 800, 0, 20), // no knee; P99 twice as high
	})
	var order []string
	for _, r := range c.Runs {
		order = append(order, r.Run)
	}
	if got := strings.Join(order, ","); got != "r1,r2,r3,r4" {
		t.Fatalf("Compare() runs in order %s, want r1,r2,r3,r4 (time order)", got)
	}
	want := []struct{ knee, p99 string }{{"", ""}, {ChangeHigher, ChangeOtherRate}, {ChangeSame, ChangeSame}, {ChangeSame, ChangeHigher}}
	for i, w := range want {
		r := c.Runs[i]
		if r.KneeChange != w.knee || r.P99["fetch"].Change != w.p99 {
			t.Errorf("Compare() %s: knee change %q, fetch p99 change %q; want %q, %q", r.Run, r.KneeChange, r.P99["fetch"].Change, w.knee, w.p99)
		}
	}
	if r := c.Runs[3]; !r.KneeRange.Open() || r.KneeRange[0] != 800 {
		t.Errorf("Compare() r4 knee range %v, want above 800 (open)", r.KneeRange)
	}

	var text bytes.Buffer
	if err := RenderCompare(&text, c); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"(400, 800]/s", "(800, 1600]/s  higher", "above 800/s", "20.0 ms [19.0, 21.0] higher",
		"r1 |==========##########                    | (400, 800]/s", "r4 |====================###################>| above 800/s"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("RenderCompare() lacks %q:\n%s", s, text.String())
		}
	}
	var js bytes.Buffer
	if err := RenderCompareJSON(&js, c); err != nil {
		t.Fatal(err)
	}
	var back Comparison
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Runs) != 4 || !back.Runs[3].KneeRange.Open() {
		t.Errorf("RenderCompareJSON() does not read back: %v\n%s", err, js.String())
	}
}
