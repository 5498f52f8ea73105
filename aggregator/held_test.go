package aggregator

import (
	"errors"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// heldBatches are one producer's batches of a 1 s window holding 50
// connections: a warm-up batch (held 20 while they start), then two window
// batches whose minimums are least1 and least2, and a final one.
func heldBatches(id string, least1, least2 uint32, holdFailures int) []*messages.SampleBatch {
	info := messages.StepInfo{FleetRate: 100, Rate: 50, Producers: 2, Duration: int64(time.Second), Connections: 50}
	rec := recorder.New("r1", 1, id, info, &recorder.Options{Seed: 1, Reservoir: 16})
	out := []*messages.SampleBatch{rec.Cut(0, 0, false, messages.Health{})}
	rec.Record(messages.Hold, 3*time.Millisecond, 3*time.Millisecond)
	for range holdFailures {
		rec.Fail(messages.Hold, errors.New("LOGIN: NO [UNAVAILABLE] Maximum number of connections exceeded"))
	}
	rec.Fail(messages.Hold, errors.New(messages.GeneratorKind+"account not sendable"))
	out = append(out, rec.Cut(0, 300*time.Millisecond, false, messages.Health{Held: 50, HeldMin: least1, HeldDrops: 2}))
	out = append(out, rec.Cut(300*time.Millisecond, 900*time.Millisecond, false, messages.Health{Held: 49, HeldMin: least2}))
	out = append(out, rec.Cut(900*time.Millisecond, 1001*time.Millisecond, true, messages.Health{Held: 48, HeldMin: 48}))
	return out
}

func TestPoolConnections(t *testing.T) {
	cmd := messages.StepCommand{Run: "r1", Step: 1, Rate: 100, Duration: messages.Duration(time.Second), Connections: 100}
	zero := messages.Duration(0)
	cmd.Warmup = &zero
	p := NewCommandPool(cmd, nil)
	for _, b := range append(heldBatches("p1", 50, 45, 3), heldBatches("p2", 40, 47, 0)...) {
		if _, err := p.Add(b); err != nil {
			t.Fatalf("Pool.Add(%s #%d) error = %v", b.Producer, b.Seq, err)
		}
	}
	got := p.Result().Connections
	want := messages.ConnectionsResult{Target: 100, Offered: 100, Held: 45 + 40, HeldAtEnd: 48 + 48, Dropped: 4,
		SetupAttempted: 2 + 3, SetupFailed: 3}
	if got == nil || *got != want {
		t.Errorf("Pool.Result().Connections = %+v, want %+v", got, want)
	}
}

func TestPoolWithoutConnections(t *testing.T) {
	p := NewPool("r1", 1, nil)
	for _, b := range stepBatches("r1", 1, []string{"p1"}, 2) {
		if _, err := p.Add(b); err != nil {
			t.Fatalf("Pool.Add() error = %v", err)
		}
	}
	if got := p.Result().Connections; got != nil {
		t.Errorf("Pool.Result().Connections = %+v, want nil for a step without held connections", got)
	}
}

func TestPoolRejectsConnectionShare(t *testing.T) {
	cmd := messages.StepCommand{Run: "r1", Step: 1, Rate: 100, Duration: messages.Duration(time.Second), Connections: 60}
	zero := messages.Duration(0)
	cmd.Warmup = &zero
	p := NewCommandPool(cmd, nil)
	_, err := p.Add(heldBatches("p1", 50, 50, 0)[1]) // 50 of 2 producers; the command gives 30 each
	if RejectReason(err) != ReasonShare {
		t.Errorf("Pool.Add(50 connections of 2 producers, command 60) error = %v, want reason %q", err, ReasonShare)
	}
}
