package verdict_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// clean is a complete step of two producers that offered exactly the target
// and whose every command succeeded, delivering ratio of rate.
func clean(step int, rate, ratio float64) messages.StepResult {
	return messages.StepResult{
		Kind: messages.KindStepResult, Run: "r1", Step: step,
		TargetRate: rate, OfferedRate: rate, DeliveredRate: ratio * rate, Ratio: ratio,
		Complete: true, Producers: []string{"p1", "p2"},
		Phases: map[string]messages.PhaseResult{
			"dial":  {Count: 10, Attempted: 10, Succeeded: 10},
			"fetch": {Count: 1000, Attempted: 1000, Succeeded: 1000},
		},
	}
}

// with returns s changed by each of fs, so table rows read as a clean step
// and what is different about it.
func with(s messages.StepResult, fs ...func(*messages.StepResult)) messages.StepResult {
	for _, f := range fs {
		f(&s)
	}
	return s
}

// stamp returns s stamped at the default threshold.
func stamp(s messages.StepResult) messages.StepResult {
	verdict.Stamp(&s, verdict.DefaultThreshold)
	return s
}

// refused makes every dial of s refused and sends nothing else.
func refused(s *messages.StepResult) {
	s.Phases = map[string]messages.PhaseResult{"dial": {Attempted: 100, Succeeded: 0}}
	s.Errors = []messages.ErrorGroup{{Phase: "dial", Kind: "connection refused", Count: 100, Example: "dial tcp 127.0.0.1:143: connect: connection refused", Producers: 2}}
	s.DeliveredRate, s.Ratio = 0, 0
}

// badPassword makes every login of s fail with a wrong password, as the
// producer records it: each session dials (and the server answers), then its
// LOGIN fails and it disconnects, so every failed login follows a dial that
// succeeded; no scheduled command is sent without a session.
func badPassword(s *messages.StepResult) {
	s.Phases = map[string]messages.PhaseResult{
		"dial":  {Count: 50, Attempted: 50, Succeeded: 50},
		"login": {Attempted: 50, Succeeded: 0},
	}
	s.Errors = []messages.ErrorGroup{
		{Phase: "login", Kind: "NO [AUTHENTICATIONFAILED]", Count: 48, Example: "a1 NO [AUTHENTICATIONFAILED] Authentication failed.", Producers: 2},
		{Phase: "login", Kind: "timeout", Count: 2, Example: "i/o timeout", Producers: 1},
	}
	s.DeliveredRate, s.Ratio = 0, 0
}

// lagging adds a producer that fell behind for cause (a Reason code, or ""
// for an aggregator too old to name one).
func lagging(name, cause string) func(*messages.StepResult) {
	return func(s *messages.StepResult) {
		s.GeneratorSaturated = true
		s.PerProducer = append(s.PerProducer, messages.ProducerBreakdown{
			Producer: name, Saturated: true, LagCause: cause, LagP99: 250, CPU: 0.1, CPULimit: 1, RunDelay: 0.4,
		})
		s.Health.LagP99Max = 250
		s.Health.SaturatedProducers = append(s.Health.SaturatedProducers, name)
	}
}

// overloaded is a step whose producer fell behind because its host was busy.
func overloaded(step int, rate float64) messages.StepResult {
	return with(clean(step, rate, 0.5), lagging("p1", messages.ReasonHostOverloaded))
}

func codes(rs []messages.Reason) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Code)
	}
	return out
}

func TestThreshold(t *testing.T) {
	tests := []struct {
		name string
		in   float64
		want float64
	}{
		{name: "zero", in: 0, want: verdict.DefaultThreshold},
		{name: "negative", in: -0.5, want: verdict.DefaultThreshold},
		{name: "above one", in: 1.5, want: verdict.DefaultThreshold},
		{name: "one", in: 1, want: 1},
		{name: "in range", in: 0.8, want: 0.8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := verdict.Threshold(tt.in); got != tt.want {
				t.Errorf("Threshold(%v) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestOf(t *testing.T) {
	why := []messages.Reason{{Code: messages.ReasonIncomplete}}
	tests := []struct {
		name      string
		ratio     float64
		threshold float64
		reasons   []messages.Reason
		want      string
	}{
		{name: "above the threshold holds", ratio: 0.95, threshold: 0.9, want: messages.VerdictHeld},
		{name: "equal to the threshold holds", ratio: 0.9, threshold: 0.9, want: messages.VerdictHeld},
		{name: "under the threshold is below", ratio: 0.89, threshold: 0.9, want: messages.VerdictBelow},
		{name: "zero threshold means the default", ratio: 0.85, threshold: 0, want: messages.VerdictBelow},
		{name: "a lower threshold", ratio: 0.85, threshold: 0.8, want: messages.VerdictHeld},
		{name: "a reason makes it inconclusive whatever the ratio", ratio: 1, threshold: 0.9, reasons: why, want: messages.VerdictInconclusive},
		{name: "a reason makes a low ratio inconclusive too", ratio: 0.1, threshold: 0.9, reasons: why, want: messages.VerdictInconclusive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := messages.StepResult{Ratio: tt.ratio, Reasons: tt.reasons}
			if got := verdict.Of(r, tt.threshold); got != tt.want {
				t.Errorf("Of(ratio %v, %d reasons, %v) = %q, want %q", tt.ratio, len(tt.reasons), tt.threshold, got, tt.want)
			}
		})
	}
}

func TestReasons(t *testing.T) {
	tests := []struct {
		name string
		step messages.StepResult
		want []string
	}{
		{name: "clean", step: clean(1, 100, 1)},
		{name: "clean and below", step: clean(1, 100, 0.3)},
		{name: "every dial refused", step: with(clean(1, 100, 1), refused), want: []string{messages.ReasonFailing}},
		{name: "51 of 100 failed", step: with(clean(1, 100, 1), func(s *messages.StepResult) {
			s.Phases = map[string]messages.PhaseResult{"fetch": {Attempted: 100, Succeeded: 49}}
		}), want: []string{messages.ReasonFailing}},
		{name: "exactly half failed", step: with(clean(1, 100, 1), func(s *messages.StepResult) {
			s.Phases = map[string]messages.PhaseResult{"fetch": {Attempted: 100, Succeeded: 50}}
		})},
		{name: "generator errors are neither failed nor sent", step: with(clean(1, 100, 1), func(s *messages.StepResult) {
			// 60 failed of 100, 50 of them the generator's: 10 of 50 sent.
			s.Phases = map[string]messages.PhaseResult{"fetch": {Attempted: 100, Succeeded: 40}}
			s.Errors = []messages.ErrorGroup{
				{Phase: "fetch", Kind: messages.GeneratorKind + "no free account", Count: 50},
				{Phase: "fetch", Kind: "NO", Count: 10},
			}
		})},
		{name: "only generator errors", step: with(clean(1, 100, 1), func(s *messages.StepResult) {
			s.Phases = map[string]messages.PhaseResult{"select": {Attempted: 30, Succeeded: 0}}
			s.Errors = []messages.ErrorGroup{{Phase: "select", Kind: messages.GeneratorKind + "empty mailbox", Count: 30}}
		})},
		{name: "a fifth of the commands had nothing to address", step: with(clean(1, 100, 1), func(s *messages.StepResult) {
			// An empty INBOX: 20 FETCHes of 100 scheduled never sent; the
			// delivered ratio would read 0.8, a wrong knee.
			s.Scheduled, s.Succeeded, s.Ratio = 100, 80, 0.8
			s.Phases = map[string]messages.PhaseResult{"fetch": {Attempted: 100, Succeeded: 80}}
			s.Errors = []messages.ErrorGroup{{Phase: "fetch", Kind: messages.UnaddressableKind + "INBOX is empty", Count: 20}}
		}), want: []string{messages.ReasonUnaddressable}},
		{name: "2% had nothing to address", step: with(clean(1, 100, 1), func(s *messages.StepResult) {
			s.Scheduled, s.Succeeded = 100, 98
			s.Errors = []messages.ErrorGroup{{Phase: "fetch", Kind: messages.UnaddressableKind + "INBOX is empty", Count: 2}}
		})},
		{name: "a producer missing", step: with(clean(1, 100, 1), func(s *messages.StepResult) {
			s.Complete, s.Missing = false, []string{"p2"}
		}), want: []string{messages.ReasonIncomplete}},
		{name: "stopped early", step: with(clean(1, 100, 1), func(s *messages.StepResult) {
			s.StoppedEarly = []string{"p1"}
		}), want: []string{messages.ReasonIncomplete}},
		{name: "no producers", step: with(clean(1, 100, 1), func(s *messages.StepResult) {
			s.Producers, s.OfferedRate = nil, 0
		}), want: []string{messages.ReasonIncomplete}},
		{name: "offered two thirds of the target", step: with(clean(1, 300, 1), func(s *messages.StepResult) {
			s.OfferedRate = 200
		}), want: []string{messages.ReasonRateMismatch}},
		{name: "offered 3% over the target", step: with(clean(1, 100, 1), func(s *messages.StepResult) {
			s.OfferedRate = 103
		}), want: []string{messages.ReasonRateMismatch}},
		{name: "offered 1.5% under the target", step: with(clean(1, 1000, 1), func(s *messages.StepResult) {
			s.OfferedRate = 985
		})},
		{name: "offered 1% over the target", step: with(clean(1, 1000, 1), func(s *messages.StepResult) {
			s.OfferedRate = 1010
		})},
		{name: "no offered rate (an old result)", step: with(clean(1, 100, 1), func(s *messages.StepResult) {
			s.OfferedRate = 0
		})},
		{name: "a producer saturated", step: with(clean(1, 100, 1), lagging("p1", messages.ReasonGeneratorSaturated)),
			want: []string{messages.ReasonGeneratorSaturated}},
		{name: "a producer's host overloaded", step: with(clean(1, 100, 1), lagging("p1", messages.ReasonHostOverloaded)),
			want: []string{messages.ReasonHostOverloaded}},
		{name: "a producer stalled", step: with(clean(1, 100, 1), lagging("p2", messages.ReasonGeneratorStalled)),
			want: []string{messages.ReasonGeneratorStalled}},
		{name: "two producers, two causes", step: with(clean(1, 100, 1), lagging("p2", messages.ReasonHostOverloaded), lagging("p1", messages.ReasonGeneratorSaturated)),
			want: []string{messages.ReasonGeneratorSaturated, messages.ReasonHostOverloaded}},
		{name: "a producer not saturated names no cause", step: with(clean(1, 100, 1), func(s *messages.StepResult) {
			s.PerProducer = []messages.ProducerBreakdown{{Producer: "p1", LagCause: messages.ReasonHostOverloaded}}
		})},
		{name: "old result: a saturated producer with no cause", step: with(clean(1, 100, 1), lagging("p1", "")),
			want: []string{messages.ReasonGeneratorSaturated}},
		{name: "old result: generator saturated, no breakdown", step: with(clean(1, 100, 1), func(s *messages.StepResult) {
			s.GeneratorSaturated, s.Health.LagP99Max = true, 300
		}), want: []string{messages.ReasonGeneratorSaturated}},
		{name: "every reason, in order", step: with(clean(1, 300, 1), refused,
			lagging("p3", messages.ReasonGeneratorStalled), lagging("p2", messages.ReasonHostOverloaded), lagging("p1", messages.ReasonGeneratorSaturated),
			func(s *messages.StepResult) { s.OfferedRate, s.Missing = 200, []string{"p2"} }),
			want: []string{messages.ReasonFailing, messages.ReasonIncomplete, messages.ReasonRateMismatch,
				messages.ReasonGeneratorSaturated, messages.ReasonHostOverloaded, messages.ReasonGeneratorStalled}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := verdict.Reasons(tt.step)
			if !slices.Equal(codes(got), tt.want) {
				t.Fatalf("Reasons(%s) = %v, want %v", tt.name, codes(got), tt.want)
			}
			for _, r := range got {
				if r.Detail == "" || r.Remedy == "" {
					t.Errorf("Reasons(%s) %s: detail %q, remedy %q, want both set", tt.name, r.Code, r.Detail, r.Remedy)
				}
				if r.Remedy != verdict.Remedy(r.Code) {
					t.Errorf("Reasons(%s) %s remedy = %q, want Remedy(%q)", tt.name, r.Code, r.Remedy, r.Code)
				}
			}
		})
	}
}

// A wrong password is the commonest way for a server not to answer correctly
// (ReasonFailing names authentication), yet the producer records it as one
// dial that succeeded for each login that failed: half of the commands sent.
// Pooled over phases, that is never more than half, so the step came out
// below (ratio 0) and became the knee at the first step.
func TestReasonsWrongPassword(t *testing.T) {
	s := with(clean(1, 100, 1), badPassword)
	if got, want := codes(verdict.Reasons(s)), []string{messages.ReasonFailing}; !slices.Equal(got, want) {
		t.Errorf("Reasons(every login refused after a good dial) = %v, want %v", got, want)
	}
}

// A lagging producer always makes a step below its target inconclusive: a
// cause this version does not know (a newer aggregator's, or garbage on the
// wire) must not let the step be judged below.
func TestReasonsUnknownLagCause(t *testing.T) {
	s := with(clean(1, 100, 0.5), lagging("p1", "generator_swapping"))
	got := verdict.Reasons(s)
	if want := []string{messages.ReasonGeneratorSaturated}; !slices.Equal(codes(got), want) {
		t.Errorf("Reasons(saturated producer with LagCause %q) = %v, want %v", "generator_swapping", codes(got), want)
	}
	if v := stamp(s).Verdict; v != messages.VerdictInconclusive {
		t.Errorf("Stamp(saturated producer with LagCause %q) verdict = %q, want %q", "generator_swapping", v, messages.VerdictInconclusive)
	}
}

func TestReasonsDetail(t *testing.T) {
	tests := []struct {
		name string
		step messages.StepResult
		code string
		want []string // substrings of the detail
	}{
		{name: "refused", step: with(clean(1, 100, 1), refused), code: messages.ReasonFailing,
			want: []string{"100 of 100", "100%", "dial: connection refused (100)"}},
		{name: "missing and stopped", step: with(clean(1, 100, 1), func(s *messages.StepResult) {
			s.Missing, s.StoppedEarly = []string{"p2"}, []string{"p1"}
		}), code: messages.ReasonIncomplete, want: []string{"no final batch from p2", "stopped before the window ended: p1"}},
		{name: "no producers", step: with(clean(1, 100, 1), func(s *messages.StepResult) { s.Producers = nil }),
			code: messages.ReasonIncomplete, want: []string{"no producer"}},
		{name: "rate mismatch", step: with(clean(1, 300, 1), func(s *messages.StepResult) { s.OfferedRate = 200 }),
			code: messages.ReasonRateMismatch, want: []string{"200.0/s", "300.0/s", "-33%"}},
		{name: "host overloaded", step: with(clean(1, 100, 1), lagging("p7", messages.ReasonHostOverloaded)),
			code: messages.ReasonHostOverloaded, want: []string{"p7", "250.0 ms", "waited for a CPU 40%"}},
		{name: "old result", step: with(clean(1, 100, 1), func(s *messages.StepResult) {
			s.GeneratorSaturated, s.Health.LagP99Max = true, 300
		}), code: messages.ReasonGeneratorSaturated, want: []string{"300.0 ms"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := slices.IndexFunc(verdict.Reasons(tt.step), func(r messages.Reason) bool { return r.Code == tt.code })
			if i < 0 {
				t.Fatalf("Reasons(%s) has no %s", tt.name, tt.code)
			}
			d := verdict.Reasons(tt.step)[i].Detail
			for _, w := range tt.want {
				if !strings.Contains(d, w) {
					t.Errorf("Reasons(%s) %s detail = %q, want it to contain %q", tt.name, tt.code, d, w)
				}
			}
		})
	}
}

func TestRemedy(t *testing.T) {
	all := []string{messages.ReasonGeneratorSaturated, messages.ReasonHostOverloaded, messages.ReasonGeneratorStalled,
		messages.ReasonIncomplete, messages.ReasonRateMismatch, messages.ReasonFailing, messages.ReasonNoResult,
		messages.ReasonUnaddressable}
	for _, code := range all {
		if verdict.Remedy(code) == "" {
			t.Errorf("Remedy(%q) = \"\", want a remedy", code)
		}
	}
	if got := verdict.Remedy("no_such_reason"); got != "" {
		t.Errorf("Remedy(%q) = %q, want \"\"", "no_such_reason", got)
	}
	// More producers on an overloaded host make it worse.
	host := strings.ToLower(verdict.Remedy(messages.ReasonHostOverloaded))
	for _, bad := range []string{"add producers", "add a producer", "add more producers"} {
		if strings.Contains(host, bad) {
			t.Errorf("Remedy(%q) = %q, says %q", messages.ReasonHostOverloaded, host, bad)
		}
	}
}

func TestFailed(t *testing.T) {
	tests := []struct {
		name                 string
		step                 messages.StepResult
		wantFailed, wantSent uint64
	}{
		{name: "clean", step: clean(1, 100, 1), wantFailed: 0, wantSent: 1010},
		{name: "refused", step: with(clean(1, 100, 1), refused), wantFailed: 100, wantSent: 100},
		{name: "generator errors left out", step: with(clean(1, 100, 1), func(s *messages.StepResult) {
			s.Phases = map[string]messages.PhaseResult{"fetch": {Attempted: 100, Succeeded: 40}}
			s.Errors = []messages.ErrorGroup{
				{Phase: "fetch", Kind: "NO", Count: 10},
				{Phase: "fetch", Kind: messages.GeneratorKind + "no free account", Count: 50},
			}
		}), wantFailed: 10, wantSent: 50},
		{name: "succeeded above attempted counts no failure", step: with(clean(1, 100, 1), func(s *messages.StepResult) {
			s.Phases = map[string]messages.PhaseResult{"fetch": {Attempted: 10, Succeeded: 12}}
		}), wantFailed: 0, wantSent: 10},
		{name: "more generator errors than failures", step: with(clean(1, 100, 1), func(s *messages.StepResult) {
			s.Phases = map[string]messages.PhaseResult{"fetch": {Attempted: 10, Succeeded: 8}}
			s.Errors = []messages.ErrorGroup{{Phase: "fetch", Kind: messages.GeneratorKind + "x", Count: 20}}
		}), wantFailed: 0, wantSent: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			failed, sent := verdict.Failed(tt.step)
			if failed != tt.wantFailed || sent != tt.wantSent {
				t.Errorf("Failed(%s) = %d, %d, want %d, %d", tt.name, failed, sent, tt.wantFailed, tt.wantSent)
			}
		})
	}
}

func TestStamp(t *testing.T) {
	tests := []struct {
		name        string
		step        messages.StepResult
		threshold   float64
		want        string
		wantReasons []string
	}{
		{name: "clean, above", step: clean(1, 100, 0.95), threshold: 0.9, want: messages.VerdictHeld},
		{name: "clean, equal", step: clean(1, 100, 0.9), threshold: 0.9, want: messages.VerdictHeld},
		{name: "clean, under", step: clean(1, 100, 0.89), threshold: 0.9, want: messages.VerdictBelow},
		{name: "clean, under a lower threshold", step: clean(1, 100, 0.85), threshold: 0.8, want: messages.VerdictHeld},
		{name: "refused", step: with(clean(1, 100, 1), refused), threshold: 0.9, want: messages.VerdictInconclusive,
			wantReasons: []string{messages.ReasonFailing}},
		{name: "host overloaded and below", step: overloaded(1, 100), threshold: 0.9, want: messages.VerdictInconclusive,
			wantReasons: []string{messages.ReasonHostOverloaded}},
		{name: "stale reasons are replaced", step: with(clean(1, 100, 1), func(s *messages.StepResult) {
			s.Reasons, s.Verdict = []messages.Reason{{Code: messages.ReasonIncomplete}}, messages.VerdictInconclusive
		}), threshold: 0.9, want: messages.VerdictHeld},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.step
			verdict.Stamp(&s, tt.threshold)
			if s.Verdict != tt.want || !slices.Equal(codes(s.Reasons), tt.wantReasons) {
				t.Errorf("Stamp(%s, %v) = %q %v, want %q %v", tt.name, tt.threshold, s.Verdict, codes(s.Reasons), tt.want, tt.wantReasons)
			}
			if valid := verdict.Valid(s); valid != (tt.want != messages.VerdictInconclusive) {
				t.Errorf("Valid(%s) = %v after Stamp, verdict %q", tt.name, valid, s.Verdict)
			}
			again := s
			verdict.Stamp(&again, tt.threshold)
			if again.Verdict != s.Verdict || !slices.Equal(codes(again.Reasons), codes(s.Reasons)) {
				t.Errorf("Stamp(Stamp(%s)) = %q %v, want %q %v", tt.name, again.Verdict, codes(again.Reasons), s.Verdict, codes(s.Reasons))
			}
		})
	}
}

func TestHas(t *testing.T) {
	s := stamp(overloaded(1, 100))
	if !verdict.Has(s, messages.ReasonHostOverloaded) {
		t.Errorf("Has(overloaded, %q) = false, want true", messages.ReasonHostOverloaded)
	}
	if verdict.Has(s, messages.ReasonFailing) {
		t.Errorf("Has(overloaded, %q) = true, want false", messages.ReasonFailing)
	}
}

func TestTopErrors(t *testing.T) {
	errs := []messages.ErrorGroup{
		{Phase: "fetch", Kind: "NO", Count: 3},
		{Phase: "login", Kind: messages.GeneratorKind + "no free account", Count: 99},
		{Phase: "dial", Kind: "connection refused", Count: 7},
		{Phase: "fetch", Kind: "BAD", Count: 3},
		{Phase: "dial", Kind: "tls: bad certificate", Count: 5},
	}
	tests := []struct {
		n    int
		want []string
	}{
		{n: 0, want: nil},
		{n: 1, want: []string{"connection refused"}},
		{n: 3, want: []string{"connection refused", "tls: bad certificate", "NO"}},
		{n: 10, want: []string{"connection refused", "tls: bad certificate", "NO", "BAD"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.n), func(t *testing.T) {
			var got []string
			for _, e := range verdict.TopErrors(errs, tt.n) {
				got = append(got, e.Kind)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("TopErrors(errs, %d) = %v, want %v", tt.n, got, tt.want)
			}
		})
	}
	if errs[0].Kind != "NO" || errs[1].Count != 99 {
		t.Errorf("TopErrors changed its argument: %v", errs)
	}
}
