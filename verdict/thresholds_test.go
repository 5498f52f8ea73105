package verdict_test

import (
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// p99 sets the P99 of phase in s (ms), and the percentiles named in above
// as lower bounds only.
func p99(phase string, ms float64, above ...string) func(*messages.StepResult) {
	return func(s *messages.StepResult) {
		p := s.Phases[phase]
		p.P99, p.Above = ms, above
		s.Phases = clonePhases(s.Phases)
		s.Phases[phase] = p
	}
}

// failedFetches makes n of s's 1,000 fetches fail with kind.
func failedFetches(n uint64, kind string) func(*messages.StepResult) {
	return func(s *messages.StepResult) {
		s.Phases = clonePhases(s.Phases)
		p := s.Phases["fetch"]
		p.Succeeded, p.Count = p.Attempted-n, p.Attempted-n
		s.Phases["fetch"] = p
		s.Errors = append(s.Errors, messages.ErrorGroup{Phase: "fetch", Kind: kind, Count: n})
	}
}

func clonePhases(m map[string]messages.PhaseResult) map[string]messages.PhaseResult {
	out := make(map[string]messages.PhaseResult, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestCheckKneeAbove(t *testing.T) {
	tests := []struct {
		name       string
		steps      []messages.StepResult
		above      float64
		wantPass   bool
		wantDetail string // a substring
	}{
		{name: "held at it, the knee above", steps: []messages.StepResult{held(1, 400), below(2, 800)}, above: 400,
			wantPass: true, wantDetail: "held at 400/s"},
		{name: "held above it, no knee", steps: []messages.StepResult{held(1, 400), held(2, 800)}, above: 500,
			wantPass: true, wantDetail: "held at 800/s"},
		{name: "the issue's run at 400/s", steps: issueSteps(), above: 400,
			wantPass: true, wantDetail: "held at 400/s"},
		{name: "the issue's run at 800/s: the range starts there", steps: issueSteps(), above: 800,
			wantDetail: "400/s"},
		{name: "the issue's run at 1000/s", steps: issueSteps(), above: 1000,
			wantDetail: "400/s"},
		{name: "held only under it", steps: []messages.StepResult{held(1, 400), below(2, 800)}, above: 600,
			wantDetail: "400/s"},
		{name: "no knee but held only under it", steps: []messages.StepResult{held(1, 400), held(2, 800)}, above: 1000,
			wantDetail: "800/s"},
		{name: "the knee at it", steps: []messages.StepResult{held(1, 800), below(2, 800)}, above: 800,
			wantDetail: "the knee is at 800/s"},
		{name: "no step held", steps: []messages.StepResult{below(1, 100), below(2, 200)}, above: 100,
			wantDetail: "no step"},
		{name: "only inconclusive steps", steps: []messages.StepResult{unsure(1, 1000)}, above: 100,
			wantDetail: "no step"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := verdict.Criteria{KneeAbove: tt.above}.Check(report(tt.steps))
			if len(got) != 1 {
				t.Fatalf("Criteria{KneeAbove: %v}.Check(%s) = %d checks, want 1", tt.above, tt.name, len(got))
			}
			c := got[0]
			if c.Pass != tt.wantPass || !strings.Contains(c.Detail, tt.wantDetail) {
				t.Errorf("Criteria{KneeAbove: %v}.Check(%s) = %v %q, want %v and a detail with %q", tt.above, tt.name, c.Pass, c.Detail, tt.wantPass, tt.wantDetail)
			}
			if !strings.Contains(c.Name, "expect-knee-above") {
				t.Errorf("Criteria{KneeAbove: %v}.Check(%s) name = %q, want it to name expect-knee-above", tt.above, tt.name, c.Name)
			}
		})
	}
}

// A knee range whose low end is at the expected rate fails, whatever the
// knee's own rate.
func TestCheckKneeAboveRange(t *testing.T) {
	r := messages.RunReport{
		LastHeld: &messages.StepRef{Step: 1, Rate: 800, Ratio: 1},
		Knee:     &messages.Knee{Step: 3, Rate: 1600, Low: 800, Uncertain: []int{2}},
	}
	for _, tt := range []struct {
		above float64
		pass  bool
	}{{above: 700, pass: true}, {above: 800, pass: false}} {
		c := verdict.Criteria{KneeAbove: tt.above}.Check(r)[0]
		if c.Pass != tt.pass {
			t.Errorf("Criteria{KneeAbove: %v}.Check(held 800, knee 800–1600) = %v %q, want %v", tt.above, c.Pass, c.Detail, tt.pass)
		}
	}
}

func TestCheckMaxP99(t *testing.T) {
	limit := verdict.PhaseLimit{Phase: "fetch", Max: 50 * time.Millisecond}
	tests := []struct {
		name       string
		steps      []messages.StepResult
		wantPass   bool
		wantDetail string
	}{
		{name: "within it on every held step", steps: []messages.StepResult{
			stamp(with(clean(1, 100, 1), p99("fetch", 10))), stamp(with(clean(2, 200, 1), p99("fetch", 50)))},
			wantPass: true, wantDetail: "2 held step(s)"},
		{name: "over on one held step", steps: []messages.StepResult{
			stamp(with(clean(1, 100, 1), p99("fetch", 10))), stamp(with(clean(2, 200, 1), p99("fetch", 75)))},
			wantDetail: "step 2 75.0 ms"},
		{name: "only a lower bound on a held step", steps: []messages.StepResult{
			stamp(with(clean(1, 100, 1), p99("fetch", 10))), stamp(with(clean(2, 200, 1), p99("fetch", 30, "p99", "p999")))},
			wantDetail: "step 2"},
		{name: "p999 a lower bound is not p99's", steps: []messages.StepResult{
			stamp(with(clean(1, 100, 1), p99("fetch", 30, "p999")))},
			wantPass: true},
		{name: "over only on steps that did not hold", steps: []messages.StepResult{
			stamp(with(clean(1, 100, 1), p99("fetch", 10))),
			stamp(with(clean(2, 200, 0.5), p99("fetch", 900))),
			stamp(with(overloaded(3, 400), p99("fetch", 900)))},
			wantPass: true, wantDetail: "1 held step(s)"},
		{name: "another phase over", steps: []messages.StepResult{
			stamp(with(clean(1, 100, 1), p99("fetch", 10), p99("dial", 900)))},
			wantPass: true},
		{name: "no step held", steps: []messages.StepResult{
			stamp(with(clean(1, 100, 0.5), p99("fetch", 10)))},
			wantDetail: "no step held"},
		{name: "no steps", wantDetail: "no step held"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := verdict.Criteria{MaxP99: []verdict.PhaseLimit{limit}}.Check(report(tt.steps))
			if len(got) != 1 {
				t.Fatalf("Criteria{MaxP99: fetch=50ms}.Check(%s) = %d checks, want 1", tt.name, len(got))
			}
			c := got[0]
			if c.Pass != tt.wantPass || !strings.Contains(c.Detail, tt.wantDetail) {
				t.Errorf("Criteria{MaxP99: fetch=50ms}.Check(%s) = %v %q, want %v and a detail with %q", tt.name, c.Pass, c.Detail, tt.wantPass, tt.wantDetail)
			}
			if c.Name != "max-p99 fetch=50ms" {
				t.Errorf("Criteria{MaxP99: fetch=50ms}.Check(%s) name = %q, want %q", tt.name, c.Name, "max-p99 fetch=50ms")
			}
		})
	}
}

func TestCheckMaxErrorRate(t *testing.T) {
	tests := []struct {
		name       string
		limit      float64
		steps      []messages.StepResult
		wantPass   bool
		wantDetail string
	}{
		{name: "no errors, zero allowed", limit: 0, steps: []messages.StepResult{held(1, 100), held(2, 200)},
			wantPass: true, wantDetail: "2 held step(s)"},
		{name: "within it", limit: 0.05, steps: []messages.StepResult{
			stamp(with(clean(1, 100, 1), failedFetches(10, "NO"))), held(2, 200)},
			wantPass: true},
		{name: "over on one held step", limit: 0.05, steps: []messages.StepResult{
			held(1, 100), stamp(with(clean(2, 200, 1), failedFetches(100, "NO")))},
			wantDetail: "step 2"},
		{name: "one error, zero allowed", limit: 0, steps: []messages.StepResult{
			stamp(with(clean(1, 100, 1), failedFetches(1, "BAD")))},
			wantDetail: "step 1"},
		{name: "generator errors left out", limit: 0.05, steps: []messages.StepResult{
			stamp(with(clean(1, 100, 1), failedFetches(100, messages.GeneratorKind+"empty mailbox")))},
			wantPass: true},
		{name: "errors only on a step below", limit: 0.05, steps: []messages.StepResult{
			held(1, 100), stamp(with(clean(2, 200, 0.5), failedFetches(400, "NO")))},
			wantPass: true, wantDetail: "1 held step(s)"},
		{name: "no step held", limit: 0.05, steps: []messages.StepResult{failingStep(1, 100)},
			wantDetail: "no step held"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limit := tt.limit
			got := verdict.Criteria{MaxErrorRate: &limit}.Check(report(tt.steps))
			if len(got) != 1 {
				t.Fatalf("Criteria{MaxErrorRate: %v}.Check(%s) = %d checks, want 1", tt.limit, tt.name, len(got))
			}
			c := got[0]
			if c.Pass != tt.wantPass || !strings.Contains(c.Detail, tt.wantDetail) {
				t.Errorf("Criteria{MaxErrorRate: %v}.Check(%s) = %v %q, want %v and a detail with %q", tt.limit, tt.name, c.Pass, c.Detail, tt.wantPass, tt.wantDetail)
			}
			if !strings.Contains(c.Name, "max-error-rate") {
				t.Errorf("Criteria{MaxErrorRate: %v}.Check(%s) name = %q, want it to name max-error-rate", tt.limit, tt.name, c.Name)
			}
		})
	}
}

func TestCheckAll(t *testing.T) {
	if got := (verdict.Criteria{}).Check(report(issueSteps())); got != nil {
		t.Errorf("Criteria{}.Check(...) = %v, want none", got)
	}
	rate := 0.01
	c := verdict.Criteria{
		KneeAbove:    200,
		MaxP99:       []verdict.PhaseLimit{{Phase: "fetch", Max: time.Second}, {Phase: "dial", Max: time.Second}},
		MaxErrorRate: &rate,
	}
	var names []string
	for _, x := range c.Check(report(issueSteps())) {
		if !x.Pass {
			t.Errorf("%+v.Check(the issue's run) %s failed: %s", c, x.Name, x.Detail)
		}
		names = append(names, x.Name)
	}
	want := []string{"expect-knee-above 200/s", "max-p99 fetch=1s", "max-p99 dial=1s", "max-error-rate 0.01"}
	if strings.Join(names, "|") != strings.Join(want, "|") {
		t.Errorf("%+v.Check(the issue's run) = %q, want %q", c, names, want)
	}
}
