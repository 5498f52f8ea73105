package aggregator

import (
	"errors"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// deliverBatches are one producer's batches of a 1 s window offering 10
// deliveries/s (half of the fleet's 20): accepted deliveries, failures,
// drops and arrivals, some of them counted in the final batch.
func deliverBatches(id string, accepted, failed, dropped int, a1, a2 messages.Arrivals) []*messages.SampleBatch {
	info := messages.StepInfo{FleetRate: 100, Rate: 50, Producers: 2, Duration: int64(time.Second),
		FleetDeliverRate: 20, DeliverRate: 10}
	rec := recorder.New("r1", 1, id, info, &recorder.Options{Seed: 1, Reservoir: 16})
	out := []*messages.SampleBatch{rec.Cut(0, 0, false, messages.Health{})}
	for range accepted {
		rec.Record(messages.Deliver, 20*time.Millisecond, 15*time.Millisecond)
	}
	for range failed {
		rec.Fail(messages.Deliver, errors.New("RCPT: 452 4.2.2 mailbox full"))
	}
	for range dropped {
		rec.DropApart(messages.Deliver)
	}
	rec.Arrived(a1)
	out = append(out, rec.Cut(0, 500*time.Millisecond, false, messages.Health{}))
	rec.Arrived(a2)
	return append(out, rec.Cut(500*time.Millisecond, 1001*time.Millisecond, true, messages.Health{}))
}

func TestPoolDeliveries(t *testing.T) {
	cmd := messages.StepCommand{Run: "r1", Step: 1, Rate: 100, Duration: messages.Duration(time.Second), DeliverRate: 20}
	zero := messages.Duration(0)
	cmd.Warmup = &zero
	p := NewCommandPool(cmd, nil)
	bs := append(deliverBatches("p1", 8, 1, 1, messages.Arrivals{Watched: 8, Seen: 6}, messages.Arrivals{Seen: 1, Missing: 1}),
		deliverBatches("p2", 6, 0, 4, messages.Arrivals{Watched: 6, Seen: 6, Duplicates: 1}, messages.Arrivals{})...)
	for _, b := range bs {
		if _, err := p.Add(b); err != nil {
			t.Fatalf("Pool.Add(%s #%d) error = %v", b.Producer, b.Seq, err)
		}
	}
	r := p.Result()
	want := messages.DeliveriesResult{TargetRate: 20, OfferedRate: 20, DeliveredRate: 14, Ratio: 0.7,
		Scheduled: 20, Accepted: 14, Failed: 1, Dropped: 5,
		Arrivals: messages.Arrivals{Watched: 14, Seen: 13, Missing: 1, Duplicates: 1}}
	if r.Deliveries == nil || *r.Deliveries != want {
		t.Errorf("Pool.Result().Deliveries = %+v, want %+v", r.Deliveries, want)
	}
	if r.Scheduled != 0 || r.Dropped != 0 {
		t.Errorf("Pool.Result() scheduled %d, dropped %d commands; want 0, 0 (deliveries apart)", r.Scheduled, r.Dropped)
	}
}

func TestPoolWithoutDeliveries(t *testing.T) {
	p := NewPool("r1", 1, nil)
	for _, b := range stepBatches("r1", 1, []string{"p1"}, 2) {
		if _, err := p.Add(b); err != nil {
			t.Fatalf("Pool.Add() error = %v", err)
		}
	}
	if got := p.Result().Deliveries; got != nil {
		t.Errorf("Pool.Result().Deliveries = %+v, want nil for a step without deliveries", got)
	}
}

func TestPoolRejectsDeliverShare(t *testing.T) {
	cmd := messages.StepCommand{Run: "r1", Step: 1, Rate: 100, Duration: messages.Duration(time.Second), DeliverRate: 40}
	zero := messages.Duration(0)
	cmd.Warmup = &zero
	p := NewCommandPool(cmd, nil)
	_, err := p.Add(deliverBatches("p1", 1, 0, 0, messages.Arrivals{}, messages.Arrivals{})[1]) // 20 of 2 producers, command 40
	if RejectReason(err) != ReasonShare {
		t.Errorf("Pool.Add(20 deliveries/s fleet-wide, command 40) error = %v, want reason %q", err, ReasonShare)
	}
}
