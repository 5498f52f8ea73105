package producer_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
)

// collector gathers one step's batches with a JetStream ordered consumer.
type collector struct {
	mu      sync.Mutex
	batches map[string][]*messages.SampleBatch
	errs    []error
	cc      jetstream.ConsumeContext
}

func (f *fleet) collect(run string, step int) *collector {
	f.t.Helper()
	ctx := context.Background()
	cons, err := f.js.OrderedConsumer(ctx, messages.SamplesStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{messages.StepSamplesFilter(run, step)},
	})
	if err != nil {
		f.t.Fatalf("OrderedConsumer() error = %v", err)
	}
	c := &collector{batches: map[string][]*messages.SampleBatch{}}
	c.cc, err = cons.Consume(c.add)
	if err != nil {
		f.t.Fatalf("Consume() error = %v", err)
	}
	f.t.Cleanup(func() {
		c.cc.Stop()
		<-c.cc.Closed()
	})
	return c
}

func (c *collector) add(m jetstream.Msg) {
	b, err := messages.DecodeBatch(m.Data())
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && m.Headers().Get(bus.ContentType) != bus.MsgpackType {
		err = errors.New("batch without the msgpack Content-Type")
	}
	if err != nil {
		c.errs = append(c.errs, err)
		return
	}
	c.batches[b.Producer] = append(c.batches[b.Producer], b)
}

// snapshot returns the batches so far, by producer, in sequence order.
func (c *collector) snapshot() (map[string][]*messages.SampleBatch, []error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]*messages.SampleBatch{}
	for p, bs := range c.batches {
		s := slices.Clone(bs)
		sort.Slice(s, func(i, j int) bool { return s[i].Seq < s[j].Seq })
		out[p] = s
	}
	return out, slices.Clone(c.errs)
}

// finals waits until n producers have sent their final batch and returns
// every producer's batches, checked: valid, numbered from 0 without gaps,
// contiguous in time, batch 0 empty, the last one final.
func (c *collector) finals(t *testing.T, n int, within time.Duration) map[string][]*messages.SampleBatch {
	t.Helper()
	got, err := c.await(n, within)
	if err != nil {
		t.Fatal(err)
	}
	checkBatches(t, got)
	return got
}

// await waits until n producers have sent their final batch and returns
// every producer's batches, unchecked.
func (c *collector) await(n int, within time.Duration) (map[string][]*messages.SampleBatch, error) {
	var got map[string][]*messages.SampleBatch
	var errs []error
	ok := testkit.Poll(within, func() bool {
		got, errs = c.snapshot()
		done := 0
		for _, bs := range got {
			if len(bs) > 0 && bs[len(bs)-1].Final {
				done++
			}
		}
		return done == n
	})
	switch {
	case len(errs) > 0:
		return nil, fmt.Errorf("undecodable batches: %v", errs)
	case !ok:
		return nil, fmt.Errorf("timed out after %v waiting for %d final batches", within, n)
	}
	return got, nil
}

// checkBatches checks every producer's batch sequence.
func checkBatches(t *testing.T, got map[string][]*messages.SampleBatch) {
	t.Helper()
	for p, bs := range got {
		checkSequence(t, p, bs)
	}
}

func checkSequence(t *testing.T, p string, bs []*messages.SampleBatch) {
	t.Helper()
	if b := bs[0]; b.Seq != 0 || len(b.Phases) != 0 || b.From != b.To || b.From != -b.Info.Warmup {
		t.Errorf("%s batch 0 = seq %d, %d phases, from %d to %d; want seq 0, empty, at -warmup %d",
			p, b.Seq, len(b.Phases), b.From, b.To, -b.Info.Warmup)
	}
	for i, b := range bs {
		if b.Seq != uint64(i) || b.Final != (i == len(bs)-1) {
			t.Errorf("%s batch %d: seq %d final %v, want seq %d final %v", p, i, b.Seq, b.Final, i, i == len(bs)-1)
		}
		if i > 0 && b.From != bs[i-1].To {
			t.Errorf("%s batch %d: from %d, want the previous batch's to %d", p, i, b.From, bs[i-1].To)
		}
	}
}

// sums adds up the scheduled and completed commands of batches.
func sums(bs []*messages.SampleBatch) (scheduled, completed, dropped uint64) {
	for _, b := range bs {
		scheduled += b.Scheduled
		completed += b.Completed
		dropped += b.Health.Dropped
	}
	return
}

// quantile pools the sketches of one phase's latency over batches.
func quantile(t *testing.T, bs []*messages.SampleBatch, p messages.Phase, pick func(*messages.PhaseStats) *messages.Sample, q float64) time.Duration {
	t.Helper()
	pooled := messages.NewSketch()
	for _, b := range bs {
		ps := b.PhaseStats(p)
		if ps == nil || len(pick(ps).Sketch) == 0 {
			continue
		}
		s, err := messages.DecodeSketch(pick(ps).Sketch)
		if err != nil {
			t.Fatalf("DecodeSketch() error = %v", err)
		}
		if err := pooled.MergeWith(s); err != nil {
			t.Fatalf("MergeWith() error = %v", err)
		}
	}
	if pooled.IsEmpty() {
		t.Fatalf("phase %v: no latencies recorded", p)
	}
	v, err := pooled.GetValueAtQuantile(q)
	if err != nil {
		t.Fatalf("GetValueAtQuantile(%v) error = %v", q, err)
	}
	return time.Duration(v * float64(time.Microsecond))
}

func response(ps *messages.PhaseStats) *messages.Sample { return &ps.Response }
func service(ps *messages.PhaseStats) *messages.Sample  { return &ps.Service }
