package aggregator

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
)

// TestCommandPoolRejectsForgeries is finding 2: one forged batch rewrote a
// step. Each forgery below is refused with its reason, and the pool's
// result is the one of the real batches alone.
func TestCommandPoolRejectsForgeries(t *testing.T) {
	real := stepBatches("r1", 1, []string{"a", "b"}, 2)
	last := func(id string) *messages.SampleBatch { // the producer's final batch
		for _, b := range real {
			if b.Producer == id && b.Final {
				return b
			}
		}
		t.Fatalf("no final batch for %s", id)
		return nil
	}
	tests := []struct {
		name   string
		forge  func() []*messages.SampleBatch
		reason string
	}{
		{"producer 0 claims a 1 ms window", func() []*messages.SampleBatch {
			b := forgeFrom(real[0], "0", 0)
			b.Info.Duration = int64(time.Millisecond)
			return []*messages.SampleBatch{b}
		}, ReasonWindow},
		{"another fleet rate", func() []*messages.SampleBatch {
			b := forgeFrom(real[0], "0", 0)
			b.Info.FleetRate, b.Info.Rate, b.Info.Producers = 1e6, 5e5, 2
			return []*messages.SampleBatch{b}
		}, ReasonFleetRate},
		{"a share that is not the command's", func() []*messages.SampleBatch {
			b := forgeFrom(real[0], "0", 0)
			b.Info.Rate = 99
			return []*messages.SampleBatch{b}
		}, ReasonShare},
		{"a forged final after the real one", func() []*messages.SampleBatch {
			b := forgeFrom(last("a"), "a", last("a").Seq+1)
			b.From, b.To = 0, 1
			return []*messages.SampleBatch{b}
		}, ReasonAfterFinal},
		{"10^15 completions", func() []*messages.SampleBatch {
			b := forgeFrom(real[1], "0", 1)
			b.Scheduled, b.Completed = 1e15, 1e15
			return []*messages.SampleBatch{b}
		}, ReasonBounds},
		{"four batches of 2^62", func() []*messages.SampleBatch {
			var out []*messages.SampleBatch
			for i := range 4 {
				b := forgeFrom(real[1], "0", uint64(i+1))
				b.Scheduled, b.Completed = 1<<62, 1<<62
				out = append(out, b)
			}
			return out
		}, ReasonBounds},
		{"a batch far outside the window", func() []*messages.SampleBatch {
			b := forgeFrom(real[1], "0", 1)
			b.From, b.To = 0, int64(48*time.Hour)
			return []*messages.SampleBatch{b}
		}, ReasonSpan},
	}
	want := canonical(t, commandPool(t, real).Result())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := commandPool(t, real)
			forged := tt.forge()
			for _, b := range forged {
				if _, err := p.Add(b); !errors.Is(err, ErrRejected) || RejectReason(err) != tt.reason {
					t.Errorf("Pool.Add(forged) error = %v (reason %q), want %v for %q", err, RejectReason(err), ErrRejected, tt.reason)
				}
			}
			if got := canonical(t, p.Result()); got != want {
				t.Errorf("StepResult with forged batches =\n%s\nwant (real batches only)\n%s", got, want)
			}
			if got := p.Rejected()[tt.reason]; got != uint64(len(forged)) {
				t.Errorf("Pool.Rejected()[%q] = %d, want %d", tt.reason, got, len(forged))
			}
		})
	}
}

// TestCommandPoolOneFinal: a producer's final batch is not replaced by
// another, whatever its sequence number.
func TestCommandPoolOneFinal(t *testing.T) {
	var real []*messages.SampleBatch
	var gap *messages.SampleBatch
	for _, b := range stepBatches("r1", 1, []string{"a"}, 3) {
		if b.Seq == 1 {
			gap = b
			continue
		}
		real = append(real, b)
	}
	p := commandPool(t, real)
	want := canonical(t, p.Result())
	forged := forgeFrom(gap, "a", 1)
	forged.Final, forged.To = true, 1
	if _, err := p.Add(forged); RejectReason(err) != ReasonSecondFinal {
		t.Errorf("Pool.Add(second final) error = %v, want reason %q", err, ReasonSecondFinal)
	}
	if got := canonical(t, p.Result()); got != want {
		t.Errorf("StepResult after a second final =\n%s\nwant\n%s", got, want)
	}
}

// forgeFrom copies b as producer's batch seq.
func forgeFrom(b *messages.SampleBatch, producer string, seq uint64) *messages.SampleBatch {
	c := *b
	c.Producer, c.Seq = producer, seq
	return &c
}

// commandPool pools batches under stepCommand.
func commandPool(t *testing.T, batches []*messages.SampleBatch) *Pool {
	t.Helper()
	p := NewCommandPool(stepCommand(batches[0].Run, batches[0].Step), nil)
	for _, b := range batches {
		if _, err := p.Add(b); err != nil {
			t.Fatalf("Pool.Add(%s #%d) error = %v", b.Producer, b.Seq, err)
		}
	}
	return p
}

// TestCommandPoolTakesShapeFromCommand: the step's rate and duration are
// the command's even when every batch agrees on another (a pool without a
// command would take them from the batches).
func TestCommandPoolTakesShapeFromCommand(t *testing.T) {
	p := commandPool(t, stepBatches("r1", 1, []string{"a"}, 1))
	if r := p.Result(); r.TargetRate != 100 || r.Duration.D() != time.Second {
		t.Errorf("StepResult target rate = %v, duration = %v; want 100, 1s (the command's)", r.TargetRate, r.Duration.D())
	}
}

func TestVolumeOverflow(t *testing.T) {
	b := &messages.SampleBatch{Phases: messages.PhaseList{
		{Phase: messages.Fetch, Attempted: math.MaxInt64, Succeeded: 0},
		{Phase: messages.List, Attempted: math.MaxInt64},
		{Phase: messages.Store, Attempted: math.MaxInt64},
	}}
	if v, ok := volume(b); ok {
		t.Errorf("volume(3 × MaxInt64) = %d, ok; want an overflow", v)
	}
	b.Phases = b.Phases[:1]
	if v, ok := volume(b); !ok || v != math.MaxInt64 {
		t.Errorf("volume(MaxInt64) = %d, %v; want %d, true", v, ok, uint64(math.MaxInt64))
	}
}

func TestCommandBook(t *testing.T) {
	b := newCommandBook(2)
	add := func(seq uint64, js string) error { _, err := b.add(seq, []byte(js)); return err }
	if err := add(1, `{"run":"r","step":1,"rate":10,"duration":"1s"}`); err != nil {
		t.Fatalf("add(valid) = %v", err)
	}
	if err := add(2, `{"run":"r","step":1,"rate":99,"duration":"1s"}`); !errors.Is(err, errConflicting) {
		t.Errorf("add(a different command for step 1) = %v, want %v", err, errConflicting)
	}
	if err := add(3, `{"run":"r","step":2,"rate":`); err == nil {
		t.Error("add(malformed) = nil, want an error")
	}
	if cmd, ok := b.get(stepKey{"r", 1}); !ok || cmd.Rate != 10 {
		t.Errorf("get(r 1) = rate %v, %v; want the first command's 10, true", cmd.Rate, ok)
	}
	_ = add(4, `{"run":"r","step":2,"rate":1,"duration":"1s"}`)
	_ = add(5, `{"run":"r","step":3,"rate":1,"duration":"1s"}`)
	if _, ok := b.get(stepKey{"r", 1}); ok {
		t.Error("the oldest command kept past the book's bound of 2")
	}
	steps, c := b.stats()
	if steps != 2 || c.conflicting != 1 || c.malformed != 1 || c.evicted != 1 || b.read != 5 {
		t.Errorf("book holds %d, counts %+v, read %d; want 2, 1 conflicting, 1 malformed, 1 evicted, 5", steps, c, b.read)
	}
}

func TestWarnLimiter(t *testing.T) {
	logs := &logBuffer{}
	now := time.Unix(0, 0)
	w := newWarnLimiter(logs.logger(), time.Second, func() time.Time { return now })
	for range 1000 {
		w.warn("kind a")
	}
	w.warn("kind b")
	now = now.Add(time.Second)
	w.warn("kind a")
	if got := logs.count("kind a"); got != 2 {
		t.Errorf("lines for 1001 warnings of one kind over 1s = %d, want 2", got)
	}
	if logs.count("suppressed_since_last=999") != 1 || logs.count("kind b") != 1 {
		t.Errorf("log =\n%s\nwant the 999 suppressed counted, and kind b logged apart", logs.String())
	}
	if got := w.total("kind a"); got != 1001 {
		t.Errorf("total(kind a) = %d, want 1001", got)
	}
}

// TestPoolSumsNeverWrap: even without a command, four batches of 2^62
// scheduled commands do not wrap the step's count to 0: the fourth is
// refused.
func TestPoolSumsNeverWrap(t *testing.T) {
	p := NewPool("r1", 1, nil)
	base := stepBatches("r1", 1, []string{"a"}, 1)[1]
	for i := range 4 {
		b := forgeFrom(base, "a", uint64(i+1))
		b.Scheduled, b.Completed = 1<<62, 1<<62
		_, err := p.Add(b)
		if i < 3 && err != nil {
			t.Fatalf("Pool.Add(batch %d of 2^62) error = %v", i, err)
		}
		if i == 3 && !errors.Is(err, ErrInvalidBatch) {
			t.Errorf("Pool.Add(4th batch of 2^62) error = %v, want %v", err, ErrInvalidBatch)
		}
	}
	if r := p.Result(); r.Scheduled != 3<<62 {
		t.Errorf("StepResult scheduled = %d, want %d", r.Scheduled, uint64(3<<62))
	}
}
