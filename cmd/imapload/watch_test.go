package main

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// seenBatches records, per step and producer, the sample batches a core
// subscription on a run's samples subjects received.
type seenBatches struct {
	mu      sync.Mutex
	batches map[int]map[string]int  // step → producer → batches
	final   map[int]map[string]bool // step → producer → final batch seen
	corrupt int
}

// watchBatches subscribes to every batch of run until the test ends.
func watchBatches(t *testing.T, nc *nats.Conn, run string) *seenBatches {
	t.Helper()
	s := &seenBatches{batches: map[int]map[string]int{}, final: map[int]map[string]bool{}}
	subscribe(t, nc, messages.RunSamplesFilter(run), func(m *nats.Msg) {
		b, err := messages.DecodeBatch(m.Data)
		s.mu.Lock()
		defer s.mu.Unlock()
		if err != nil {
			s.corrupt++
			return
		}
		if s.batches[b.Step] == nil {
			s.batches[b.Step], s.final[b.Step] = map[string]int{}, map[string]bool{}
		}
		s.batches[b.Step][b.Producer]++
		s.final[b.Step][b.Producer] = s.final[b.Step][b.Producer] || b.Final
	})
	return s
}

// finals lists the producers whose final batch of step arrived, sorted.
func (s *seenBatches) finals(step int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id, ok := range s.final[step] {
		if ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// awaitFinals waits up to within for the final batches of step from ids
// (sorted) and returns who sent one. The aggregator may have pooled them, or
// a producer may have exited, before this test's own subscription read
// them: each subscription is delivered on its own.
func (s *seenBatches) awaitFinals(step int, ids []string, within time.Duration) []string {
	var got []string
	testkit.Poll(within, func() bool {
		got = s.finals(step)
		return slices.Equal(got, ids)
	})
	return got
}

// senders lists the producers that sent at least n batches of step, sorted.
func (s *seenBatches) senders(step, n int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id, c := range s.batches[step] {
		if c >= n {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// undecodable counts the batches messages.DecodeBatch refused.
func (s *seenBatches) undecodable() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.corrupt
}

// seenResults records what arrived on a run's results subject.
type seenResults struct {
	mu      sync.Mutex
	steps   map[int]messages.StepResult
	reports []messages.RunReport
}

// watchResults subscribes to run's results subject until the test ends.
func watchResults(t *testing.T, nc *nats.Conn, run string) *seenResults {
	t.Helper()
	s := &seenResults{steps: map[int]messages.StepResult{}}
	subscribe(t, nc, messages.ResultsSubject(run), func(m *nats.Msg) {
		var k struct{ Kind string }
		_ = json.Unmarshal(m.Data, &k)
		s.mu.Lock()
		defer s.mu.Unlock()
		switch k.Kind {
		case messages.KindStepResult:
			var r messages.StepResult
			if json.Unmarshal(m.Data, &r) == nil {
				s.steps[r.Step] = r
			}
		case messages.KindRunReport:
			var r messages.RunReport
			if json.Unmarshal(m.Data, &r) == nil {
				s.reports = append(s.reports, r)
			}
		}
	})
	return s
}

// step waits for the result of step n.
func (s *seenResults) step(t *testing.T, n int, within time.Duration) messages.StepResult {
	t.Helper()
	var r messages.StepResult
	testkit.WaitFor(t, within, "the result of step "+strconv.Itoa(n), func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		var ok bool
		r, ok = s.steps[n]
		return ok
	})
	return r
}

// report waits for a run report that covers n steps.
func (s *seenResults) report(t *testing.T, n int, within time.Duration) messages.RunReport {
	t.Helper()
	var r messages.RunReport
	testkit.WaitFor(t, within, "a run report of "+strconv.Itoa(n)+" steps", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, rep := range s.reports {
			if len(rep.Steps) == n {
				r = rep
				return true
			}
		}
		return false
	})
	return r
}

func subscribe(t *testing.T, nc *nats.Conn, subject string, h nats.MsgHandler) {
	t.Helper()
	sub, err := nc.Subscribe(subject, h)
	if err != nil {
		t.Fatalf("Subscribe(%s): %v", subject, err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

// awaitProducers polls the registry until the producers ids are live.
func awaitProducers(t *testing.T, nc *nats.Conn, ids ...string) {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream.New: %v", err)
	}
	testkit.WaitFor(t, 30*time.Second, "producers "+strings.Join(ids, ", ")+" to register", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		kv, err := js.KeyValue(ctx, messages.ProducersBucket)
		if err != nil {
			return false
		}
		keys, _ := kv.Keys(ctx)
		for _, id := range ids {
			if !slices.Contains(keys, messages.ProducerKey(id)) {
				return false
			}
		}
		return true
	})
}
