package verdict_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// report builds a run report of stamped steps as the reporter does: the knee
// at the default threshold, then the thresholds (if any), then the verdict.
func report(steps []messages.StepResult, checks ...messages.ThresholdCheck) messages.RunReport {
	knee, lastHeld, invalid := verdict.Knee(steps, verdict.DefaultThreshold)
	r := messages.RunReport{
		Kind: messages.KindRunReport, Run: "r1", Threshold: verdict.DefaultThreshold,
		Knee: knee, LastHeld: lastHeld, Invalid: invalid, Steps: steps, Thresholds: checks,
	}
	verdict.Conclude(&r)
	return r
}

// failingStep is step at rate where every dial was refused, stamped.
func failingStep(step int, rate float64) messages.StepResult {
	return stamp(with(clean(step, rate, 1), refused))
}

var (
	passed = messages.ThresholdCheck{Name: "max-p99 fetch=50ms", Pass: true, Detail: "within it"}
	failed = messages.ThresholdCheck{Name: "max-p99 fetch=50ms", Pass: false, Detail: "over at step 2 75 ms"}
)

func TestConclude(t *testing.T) {
	tests := []struct {
		name        string
		steps       []messages.StepResult
		checks      []messages.ThresholdCheck
		want        string
		wantExit    int
		wantReasons []string
	}{
		{name: "a knee", steps: []messages.StepResult{held(1, 100), below(2, 200)},
			want: messages.RunKnee, wantExit: verdict.ExitOK},
		{name: "the issue's run: a knee as a range", steps: issueSteps(),
			want: messages.RunKnee, wantExit: verdict.ExitOK},
		{name: "every step held", steps: []messages.StepResult{held(1, 100), held(2, 200), held(3, 400)},
			want: messages.RunNoKnee, wantExit: verdict.ExitOK},
		{name: "step 1 failing", steps: []messages.StepResult{failingStep(1, 100)},
			want: messages.RunFailing, wantExit: verdict.ExitFailing, wantReasons: []string{messages.ReasonFailing}},
		{name: "failing before an overloaded host", steps: []messages.StepResult{unsure(1, 100), failingStep(2, 200)},
			want: messages.RunFailing, wantExit: verdict.ExitFailing, wantReasons: []string{messages.ReasonFailing}},
		{name: "a host overloaded before any knee", steps: []messages.StepResult{held(1, 100), held(2, 200), unsure(3, 400)},
			want: messages.RunInconclusive, wantExit: verdict.ExitInconclusive, wantReasons: []string{messages.ReasonHostOverloaded}},
		{name: "every step inconclusive", steps: []messages.StepResult{unsure(1, 100), unsure(2, 200)},
			want: messages.RunInconclusive, wantExit: verdict.ExitInconclusive, wantReasons: []string{messages.ReasonHostOverloaded}},
		{name: "no steps",
			want: messages.RunInconclusive, wantExit: verdict.ExitInconclusive, wantReasons: []string{messages.ReasonNoResult}},
		{name: "a knee, a threshold passed", steps: []messages.StepResult{held(1, 100), below(2, 200)}, checks: []messages.ThresholdCheck{passed},
			want: messages.RunKnee, wantExit: verdict.ExitOK},
		{name: "a knee, a threshold failed", steps: []messages.StepResult{held(1, 100), below(2, 200)}, checks: []messages.ThresholdCheck{passed, failed},
			want: messages.RunKnee, wantExit: verdict.ExitThreshold},
		{name: "no knee, a threshold failed", steps: []messages.StepResult{held(1, 100), held(2, 200)}, checks: []messages.ThresholdCheck{failed},
			want: messages.RunNoKnee, wantExit: verdict.ExitThreshold},
		{name: "failing, a threshold failed", steps: []messages.StepResult{failingStep(1, 100)}, checks: []messages.ThresholdCheck{failed},
			want: messages.RunFailing, wantExit: verdict.ExitFailing, wantReasons: []string{messages.ReasonFailing}},
		{name: "inconclusive, a threshold failed", steps: []messages.StepResult{held(1, 100), unsure(2, 200)}, checks: []messages.ThresholdCheck{failed},
			want: messages.RunInconclusive, wantExit: verdict.ExitInconclusive, wantReasons: []string{messages.ReasonHostOverloaded}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := report(tt.steps, tt.checks...)
			if r.Verdict != tt.want || !slices.Equal(codes(r.Reasons), tt.wantReasons) {
				t.Errorf("Conclude(%s) = %q %v, want %q %v", tt.name, r.Verdict, codes(r.Reasons), tt.want, tt.wantReasons)
			}
			for _, x := range r.Reasons {
				if x.Remedy == "" {
					t.Errorf("Conclude(%s) reason %s has no remedy", tt.name, x.Code)
				}
			}
			if got := verdict.ExitCode(r); got != tt.wantExit {
				t.Errorf("ExitCode(%s) = %d, want %d", tt.name, got, tt.wantExit)
			}
		})
	}
}

// A failing run names its step and its commonest errors. The steps are
// stamped by hand so that this tests Conclude alone (TestReasonsWrongPassword
// tests stamping such a step).
func TestConcludeFailing(t *testing.T) {
	why := []messages.Reason{{Code: messages.ReasonFailing, Detail: "50 of 50 logins failed", Remedy: verdict.Remedy(messages.ReasonFailing)}}
	var steps []messages.StepResult
	for i, rate := range []float64{100, 200} {
		s := with(clean(i+1, rate, 0), badPassword)
		s.Reasons, s.Verdict = slices.Clone(why), messages.VerdictInconclusive
		steps = append(steps, s)
	}
	r := report(steps)
	if r.Verdict != messages.RunFailing {
		t.Fatalf("Conclude(wrong password) = %q, want %q", r.Verdict, messages.RunFailing)
	}
	if got := verdict.ExitCode(r); got != verdict.ExitFailing {
		t.Errorf("ExitCode(wrong password) = %d, want %d", got, verdict.ExitFailing)
	}
	if len(r.Reasons) != 1 || !strings.Contains(r.Reasons[0].Detail, "step 1") || !strings.Contains(r.Reasons[0].Detail, "50 of 50 logins failed") {
		t.Errorf("Conclude(wrong password) reasons = %+v, want one about step 1 with its detail", r.Reasons)
	}
	want := messages.ErrorGroup{Phase: "login", Kind: "NO [AUTHENTICATIONFAILED]", Count: 48, Example: "a1 NO [AUTHENTICATIONFAILED] Authentication failed.", Producers: 2}
	if len(r.TopErrors) != 2 || r.TopErrors[0] != want {
		t.Errorf("Conclude(wrong password) top errors = %+v, want %+v first of 2", r.TopErrors, want)
	}
	if d := steps[0].Reasons[0].Detail; d != why[0].Detail {
		t.Errorf("Conclude(wrong password) changed step 1's reason to %q", d)
	}
}

// From the producers' figures to the exit code: a wrong password must end
// the run as failing (exit 3), not as a knee at step 1 (exit 0).
func TestConcludeWrongPassword(t *testing.T) {
	r := report([]messages.StepResult{stamp(with(clean(1, 100, 0), badPassword))})
	if r.Verdict != messages.RunFailing || verdict.ExitCode(r) != verdict.ExitFailing {
		t.Errorf("Conclude(step 1 with every login refused) = %q exit %d, want %q exit %d",
			r.Verdict, verdict.ExitCode(r), messages.RunFailing, verdict.ExitFailing)
	}
}

// messages.RunNoKnee is "every valid step held; the ramp stopped at its
// limit", and RunInconclusive (ExitInconclusive) "the run stopped at a step
// that could not be measured": an inconclusive step that a step at the same
// or a higher rate then measured did not stop the run. The ramp makes the
// first case itself: a step the fleet mis-shared is re-issued under the next
// step number, which stops the first one (ramp.Controller.step), and the
// reporter's report holds both results.
func TestConcludeSupersededInconclusive(t *testing.T) {
	misShared := func(s *messages.StepResult) {
		s.OfferedRate, s.StoppedEarly = 66, []string{"p1", "p2"}
	}
	tests := []struct {
		name  string
		steps []messages.StepResult
	}{
		{name: "a mis-shared step re-issued", steps: []messages.StepResult{
			stamp(with(clean(1, 100, 1), misShared)),
			held(2, 100), held(3, 200), held(4, 400)}},
		{name: "an overloaded host for one step", steps: []messages.StepResult{
			held(1, 100), unsure(2, 200), held(3, 400), held(4, 800)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := report(tt.steps)
			if r.Verdict != messages.RunNoKnee || verdict.ExitCode(r) != verdict.ExitOK {
				t.Errorf("Conclude(%s) = %q %v exit %d, want %q exit %d",
					tt.name, r.Verdict, codes(r.Reasons), verdict.ExitCode(r), messages.RunNoKnee, verdict.ExitOK)
			}
		})
	}
}

// Conclude replaces what an earlier Conclude set.
func TestConcludeAgain(t *testing.T) {
	r := report([]messages.StepResult{failingStep(1, 100)})
	r.Steps = []messages.StepResult{held(1, 100), held(2, 200)}
	r.Knee, r.LastHeld, r.Invalid = verdict.Knee(r.Steps, r.Threshold)
	verdict.Conclude(&r)
	if r.Verdict != messages.RunNoKnee || r.Reasons != nil || r.TopErrors != nil {
		t.Errorf("Conclude(failing, then every step held) = %q, reasons %v, top errors %v; want %q and none",
			r.Verdict, codes(r.Reasons), r.TopErrors, messages.RunNoKnee)
	}
}

func TestExitCode(t *testing.T) {
	tests := []struct {
		name    string
		verdict string
		checks  []messages.ThresholdCheck
		want    int
	}{
		{name: "knee", verdict: messages.RunKnee, want: verdict.ExitOK},
		{name: "no knee", verdict: messages.RunNoKnee, want: verdict.ExitOK},
		{name: "no knee, thresholds passed", verdict: messages.RunNoKnee, checks: []messages.ThresholdCheck{passed, passed}, want: verdict.ExitOK},
		{name: "knee, a threshold failed", verdict: messages.RunKnee, checks: []messages.ThresholdCheck{passed, failed}, want: verdict.ExitThreshold},
		{name: "failing", verdict: messages.RunFailing, want: verdict.ExitFailing},
		{name: "failing, a threshold failed", verdict: messages.RunFailing, checks: []messages.ThresholdCheck{failed}, want: verdict.ExitFailing},
		{name: "inconclusive", verdict: messages.RunInconclusive, want: verdict.ExitInconclusive},
		{name: "inconclusive, a threshold failed", verdict: messages.RunInconclusive, checks: []messages.ThresholdCheck{failed}, want: verdict.ExitInconclusive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := messages.RunReport{Verdict: tt.verdict, Thresholds: tt.checks}
			if got := verdict.ExitCode(r); got != tt.want {
				t.Errorf("ExitCode(%s) = %d, want %d", tt.name, got, tt.want)
			}
		})
	}
}
