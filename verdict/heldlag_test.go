package verdict_test

import (
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// TestHeldIsHeld: a step that delivered its target holds whatever its
// generator's health, its latencies marked as carrying the lag with the
// figure; only a step below its target on a lagging generator is
// inconclusive (issue 22, finding 4).
func TestHeldIsHeld(t *testing.T) {
	busy := lagging("p1", messages.ReasonHostOverloaded)
	held := stamp(with(clean(1, 800, 1), busy))
	if held.Verdict != messages.VerdictHeld || len(held.Reasons) != 0 {
		t.Fatalf("delivered the target on a busy host: verdict %q, reasons %v; want held, no reasons", held.Verdict, codes(held.Reasons))
	}
	if len(held.Caveats) != 1 || held.Caveats[0].Code != messages.ReasonHostOverloaded ||
		!strings.Contains(held.Caveats[0].Detail, "latencies carry the generator's lag") ||
		!strings.Contains(held.Caveats[0].Detail, "lag P99 250.0 ms") {
		t.Errorf("caveats = %+v, want one host_overloaded caveat saying the latencies carry a lag P99 of 250.0 ms", held.Caveats)
	}
	if k, last, _ := verdict.Knee([]messages.StepResult{held}, 0); k != nil || last == nil || last.Step != 1 {
		t.Errorf("Knee() = %+v, last held %+v; want no knee, step 1 held", k, last)
	}
	again := held
	verdict.Stamp(&again, 0)
	if len(again.Caveats) != 1 {
		t.Errorf("stamped twice: caveats %+v, want the one caveat, not two", again.Caveats)
	}
	short := stamp(with(clean(2, 1600, 0.7), busy))
	if short.Verdict != messages.VerdictInconclusive || !verdict.Has(short, messages.ReasonHostOverloaded) {
		t.Errorf("below the target on a busy host: verdict %q, reasons %v; want inconclusive host_overloaded", short.Verdict, codes(short.Reasons))
	}
	// Held at 0.9, below at 0.95: the caveat's lag makes it inconclusive
	// there.
	strict := with(clean(3, 800, 0.93), busy)
	verdict.Stamp(&strict, 0)
	if v := verdict.Of(strict, 0.95); v != messages.VerdictInconclusive {
		t.Errorf("held at 0.9 with a lag caveat, judged at 0.95: Of() = %q, want inconclusive", v)
	}
}

// TestLagOnTheServersHost: when the lagging producer's target is its own
// host, the reason says the server shares it and the remedy is one that can
// be followed there.
func TestLagOnTheServersHost(t *testing.T) {
	s := with(clean(1, 1600, 0.7), lagging("p1", messages.ReasonHostOverloaded), func(s *messages.StepResult) {
		s.PerProducer[0].Local = true
	})
	s = stamp(s)
	if len(s.Reasons) != 1 {
		t.Fatalf("reasons %v, want host_overloaded", codes(s.Reasons))
	}
	x := s.Reasons[0]
	if !strings.Contains(x.Detail, "the server under test runs on the same host as p1") {
		t.Errorf("detail = %q, want it to say the server shares p1's host", x.Detail)
	}
	for _, want := range []string{"--sessions", "--step-duration", "--procs", "taskset"} {
		if !strings.Contains(x.Remedy, want) {
			t.Errorf("remedy = %q, want it to offer %s", x.Remedy, want)
		}
	}
	if strings.Contains(x.Remedy, "more producers on the same host will not help") {
		t.Errorf("remedy = %q: the other-host remedy, on a host that is the server's too", x.Remedy)
	}
}
