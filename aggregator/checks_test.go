package aggregator

import (
	"errors"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
	"github.com/imapload/imapload/verdict"
)

// TestPoolIntegrityChecks: the producers' integrity checks are summed into
// the result, and APPENDs no check could address (no APPENDUID) say that
// the checks were disabled, instead of leaving them silently out.
func TestPoolIntegrityChecks(t *testing.T) {
	info := messages.StepInfo{FleetRate: 20, Rate: 10, Producers: 2, Duration: int64(time.Second)}
	tests := []struct {
		name         string
		ok, bad, nou [2]int // per producer: checks passed, checks failed, APPENDs without a UID
		want         messages.Checks
		wantDisabled string
	}{
		{name: "all checked", ok: [2]int{3, 2}, bad: [2]int{1, 0}, want: messages.Checks{Run: 6, Failed: 1}},
		{name: "no UIDPLUS", nou: [2]int{4, 5}, want: messages.Checks{Unaddressable: 9},
			wantDisabled: "checks disabled: server has no UIDPLUS (no APPENDUID for any APPEND)"},
		{name: "one producer's server without UIDPLUS", ok: [2]int{2, 0}, nou: [2]int{0, 3}, want: messages.Checks{Run: 2, Unaddressable: 3},
			wantDisabled: "checks partly disabled: some APPENDs got no UID (APPENDUID) from the server"},
		{name: "none", want: messages.Checks{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var batches []*messages.SampleBatch
			for i, id := range []string{"a", "b"} {
				rec := recorder.New("r1", 1, id, info, &recorder.Options{Seed: 1})
				for range tt.ok[i] {
					rec.Check(true)
				}
				for range tt.bad[i] {
					rec.Check(false)
				}
				for range tt.nou[i] {
					rec.Unaddressable()
				}
				batches = append(batches, rec.Cut(0, time.Second, true, messages.Health{}))
			}
			r := poolOf(t, batches).Result()
			if r.Checks != tt.want || r.ChecksDisabled != tt.wantDisabled {
				t.Errorf("Pool.Result() checks = %+v, %q; want %+v, %q", r.Checks, r.ChecksDisabled, tt.want, tt.wantDisabled)
			}
		})
	}
}

// TestPoolClientPhaseGeneratorErrors: a MOVE, EXPUNGE or body FETCH that
// imapload could not address (nothing of its own to move, an empty INBOX)
// is the generator's error: the step is not failing, and the server's
// failed and sent commands leave them out.
func TestPoolClientPhaseGeneratorErrors(t *testing.T) {
	info := messages.StepInfo{FleetRate: 100, Rate: 100, Producers: 1, Duration: int64(time.Second)}
	rec := recorder.New("r1", 1, "a", info, &recorder.Options{Seed: 1})
	for _, p := range []messages.Phase{messages.Move, messages.Expunge, messages.Body} {
		for range 30 {
			rec.Fail(p, errors.New(messages.GeneratorKind+"nothing to address"))
			rec.Scheduled(false)
		}
	}
	for range 10 {
		rec.Record(messages.Noop, time.Millisecond, time.Millisecond)
		rec.Scheduled(true)
	}
	r := poolOf(t, []*messages.SampleBatch{rec.Cut(0, time.Second, true, messages.Health{})}).Result()
	if failed, sent := verdict.Failed(r); failed != 0 || sent != 10 {
		t.Errorf("verdict.Failed(result) = %d failed of %d sent, want 0 of 10: generator errors are not the server's", failed, sent)
	}
	if verdict.Has(r, messages.ReasonFailing) {
		t.Errorf("Pool.Result() reasons = %+v, want no %q: the server failed nothing", r.Reasons, messages.ReasonFailing)
	}
	for _, name := range []string{"move", "expunge", "body", "noop"} {
		if _, ok := r.Phases[name]; !ok {
			t.Errorf("Pool.Result() phases lack %q: %v", name, r.Phases)
		}
	}
}
