package aggregator

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
	"github.com/nats-io/nats.go/jetstream"
)

func TestNewNilConn(t *testing.T) {
	if _, err := New(nil, nil); !errors.Is(err, ErrNoConn) {
		t.Errorf("New(nil, nil) error = %v, want %v", err, ErrNoConn)
	}
}

func TestServicePublishesCompleteStep(t *testing.T) {
	t.Parallel() // a NATS server of its own
	tb := startBus(t)
	tb.command(t, "r1", 1)
	batches := stepBatches("r1", 1, []string{"a", "b", "c"}, 3)
	for _, b := range batches {
		tb.publish(t, b, "")
	}
	startAgg(t, tb.nc, &Options{Durable: "agg-complete"})
	got, raw := tb.waitResult(t, "r1", 1, 10*time.Second)
	want := poolOf(t, batches).Result()
	if canonical(t, got) != canonical(t, want) {
		t.Errorf("published StepResult =\n%s\nwant (pure pool)\n%s", canonical(t, got), canonical(t, want))
	}
	if !got.Complete || got.Generated.IsZero() || got.Batches != uint64(len(batches)) {
		t.Errorf("published StepResult complete = %v, generated = %v, batches = %d; want true, set, %d", got.Complete, got.Generated, got.Batches, len(batches))
	}
	if sum := raw.Header.Get(messages.SummaryHeader); sum != got.Summary() || !strings.HasPrefix(sum, "step 1: ") {
		t.Errorf("result %s = %q, want %q", messages.SummaryHeader, sum, got.Summary())
	}
	if ct := raw.Header.Get(bus.ContentType); ct != bus.JSONType {
		t.Errorf("result Content-Type = %q, want %q", ct, bus.JSONType)
	}
	if id := raw.Header.Get(jetstream.MsgIDHeader); id != messages.ResultMsgID("r1", 1, 0) {
		t.Errorf("result Nats-Msg-Id = %q, want %q", id, messages.ResultMsgID("r1", 1, 0))
	}
}

// TestServiceRestartMidStep stops the aggregator after it merged and
// acknowledged half of the step, publishes the rest, and starts another with
// the same durable: the result must be the one of a single pass.
func TestServiceRestartMidStep(t *testing.T) {
	t.Parallel() // a NATS server of its own
	tb := startBus(t)
	tb.command(t, "r1", 2)
	batches := stepBatches("r1", 2, []string{"a", "b", "c", "d"}, 4)
	half := len(batches) / 2
	for _, b := range batches[:half] {
		tb.publish(t, b, "")
	}
	opts := &Options{Durable: "agg-restart", AckWait: 500 * time.Millisecond}
	first := startAgg(t, tb.nc, opts)
	testkit.WaitFor(t, 10*time.Second, "the first aggregator to merge the first half", func() bool { return tb.consumed(t, "agg-restart", 1) })
	first.stop(t)
	for _, b := range batches[half:] {
		tb.publish(t, b, "")
	}
	startAgg(t, tb.nc, opts)
	got, _ := tb.waitResult(t, "r1", 2, 10*time.Second)
	if want := poolOf(t, batches).Result(); canonical(t, got) != canonical(t, want) {
		t.Errorf("StepResult after a restart =\n%s\nwant (one pass)\n%s", canonical(t, got), canonical(t, want))
	}
	testkit.WaitFor(t, 10*time.Second, "every batch acknowledged", func() bool { return tb.consumed(t, "agg-restart", 0) })
	if n := len(tb.results(t, "r1")); n != 1 {
		t.Errorf("results on %s = %d, want 1", messages.ResultsSubject("r1"), n)
	}
}

// TestServiceRestartWhileWaiting restarts the aggregator while a step waits
// for a producer that never sends its final batch. Nothing new arrives: the
// new aggregator learns of the step from the message the first one held.
func TestServiceRestartWhileWaiting(t *testing.T) {
	t.Parallel() // a NATS server of its own
	tb := startBus(t)
	tb.command(t, "r1", 3)
	batches := stepBatches("r1", 3, []string{"a", "b"}, 2)
	batches = append(batches, stepBatches("r1", 3, []string{"z"}, 1)[0]) // z accepts, then vanishes
	for _, b := range batches {
		tb.publish(t, b, "")
	}
	opts := &Options{Durable: "agg-wait", AckWait: 300 * time.Millisecond, StepTimeout: 2 * time.Second}
	first := startAgg(t, tb.nc, opts)
	testkit.WaitFor(t, 10*time.Second, "the first aggregator to merge the step", func() bool { return tb.consumed(t, "agg-wait", 1) })
	first.stop(t)
	startAgg(t, tb.nc, opts)
	got, _ := tb.waitResult(t, "r1", 3, 15*time.Second)
	if want := poolOf(t, batches).Result(); canonical(t, got) != canonical(t, want) {
		t.Errorf("StepResult after a restart =\n%s\nwant\n%s", canonical(t, got), canonical(t, want))
	}
	if got.Complete || len(got.Missing) != 1 || got.Missing[0] != "z" {
		t.Errorf("StepResult complete = %v, missing = %v; want false, [z]", got.Complete, got.Missing)
	}
}

func TestServiceDuplicateBatch(t *testing.T) {
	t.Parallel() // a NATS server of its own
	tb := startBus(t)
	tb.command(t, "r1", 4)
	batches := stepBatches("r1", 4, []string{"a", "b"}, 2)
	for _, b := range batches {
		tb.publish(t, b, "")
	}
	tb.publish(t, batches[2], "a-retry-with-another-id") // stored twice
	startAgg(t, tb.nc, &Options{Durable: "agg-dup"})
	got, _ := tb.waitResult(t, "r1", 4, 10*time.Second)
	want := poolOf(t, batches).Result()
	if got.Succeeded != want.Succeeded || got.Phases["fetch"].Count != want.Phases["fetch"].Count || got.Batches != want.Batches {
		t.Errorf("StepResult succeeded = %d, fetch count = %d, batches = %d; want %d, %d, %d (not doubled)",
			got.Succeeded, got.Phases["fetch"].Count, got.Batches, want.Succeeded, want.Phases["fetch"].Count, want.Batches)
	}
	if got.Duplicates != 1 {
		t.Errorf("StepResult duplicates = %d, want 1", got.Duplicates)
	}
}

func TestServiceCorruptBatch(t *testing.T) {
	t.Parallel() // a NATS server of its own
	tb := startBus(t)
	tb.command(t, "r1", 5)
	logs := &logBuffer{}
	batches := stepBatches("r1", 5, []string{"a", "b"}, 2)
	tb.publishRaw(t, messages.SamplesSubject("r1", 5, "evil"), []byte("\x81\xa3run\xdb\xff\xff\xff\xff"), "evil-1")
	tb.publishRaw(t, "imapload.samples.r1.notastep.x", []byte("junk"), "evil-2")
	for _, b := range batches {
		tb.publish(t, b, "")
	}
	startAgg(t, tb.nc, &Options{Durable: "agg-corrupt", Logger: logs.logger()})
	got, _ := tb.waitResult(t, "r1", 5, 10*time.Second)
	if got.Corrupt != 1 || got.Batches != uint64(len(batches)) || !got.Complete {
		t.Errorf("StepResult corrupt = %d, batches = %d, complete = %v; want 1, %d, true", got.Corrupt, got.Batches, got.Complete, len(batches))
	}
	testkit.WaitFor(t, 10*time.Second, "every message settled", func() bool { return tb.consumed(t, "agg-corrupt", 0) })
	if logs.count("corrupt batch counted and terminated") == 0 || logs.count("unexpected subject") == 0 {
		t.Errorf("log = %s\nwant the corrupt batch and the odd subject reported", logs.String())
	}
}

func TestServiceMissingProducer(t *testing.T) {
	t.Parallel() // a NATS server of its own
	tb := startBus(t)
	tb.command(t, "r1", 6)
	batches := stepBatches("r1", 6, []string{"a"}, 2)
	batches = append(batches, stepBatches("r1", 6, []string{"b"}, 1)[0]) // batch 0 only
	for _, b := range batches {
		tb.publish(t, b, "")
	}
	start := time.Now()
	startAgg(t, tb.nc, &Options{Durable: "agg-missing", StepTimeout: 500 * time.Millisecond})
	got, _ := tb.waitResult(t, "r1", 6, 10*time.Second)
	if got.Complete || len(got.Missing) != 1 || got.Missing[0] != "b" {
		t.Errorf("StepResult complete = %v, missing = %v; want false, [b]", got.Complete, got.Missing)
	}
	if el := time.Since(start); el < 500*time.Millisecond {
		t.Errorf("StepResult published after %v, want after the 500ms timeout", el)
	}
}

// TestServiceNeverPublishesTwice starts a second aggregator with a new
// durable, which replays the whole stream: it must find the result already
// published and publish nothing.
func TestServiceNeverPublishesTwice(t *testing.T) {
	t.Parallel() // a NATS server of its own
	tb := startBus(t)
	tb.command(t, "r1", 7)
	for _, b := range stepBatches("r1", 7, []string{"a", "b"}, 2) {
		tb.publish(t, b, "")
	}
	first := startAgg(t, tb.nc, &Options{Durable: "agg-one"})
	tb.waitResult(t, "r1", 7, 10*time.Second)
	first.stop(t)
	logs := &logBuffer{}
	startAgg(t, tb.nc, &Options{Durable: "agg-two", Logger: logs.logger()})
	testkit.WaitFor(t, 10*time.Second, "the second aggregator to go through the stream", func() bool { return tb.consumed(t, "agg-two", 0) })
	if n := logs.count("step result published") + logs.count("already in the stream"); n != 0 {
		t.Errorf("second aggregator published %d results, want 0; log:\n%s", n, logs.String())
	}
	if n := len(tb.results(t, "r1")); n != 1 {
		t.Errorf("results on %s = %d, want 1", messages.ResultsSubject("r1"), n)
	}
}

// TestServiceLargeStep has more batches than one replay fetch returns.
func TestServiceLargeStep(t *testing.T) {
	t.Parallel() // a NATS server of its own
	tb := startBus(t)
	tb.command(t, "r1", 8)
	ids := make([]string, 40)
	for i := range ids {
		ids[i] = "p" + pad2(i)
	}
	batches := stepBatches("r1", 8, ids, 8)
	for _, b := range batches {
		tb.publish(t, b, "")
	}
	startAgg(t, tb.nc, &Options{Durable: "agg-large"})
	got, _ := tb.waitResult(t, "r1", 8, 20*time.Second)
	if want := poolOf(t, batches).Result(); canonical(t, got) != canonical(t, want) {
		t.Errorf("StepResult of %d batches differs from the pure pool's", len(batches))
	}
}

func TestRunCancelledBeforeStart(t *testing.T) {
	t.Parallel() // a NATS server of its own
	tb := startBus(t)
	a, err := New(tb.nc, nil)
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.Run(ctx); err != nil {
		t.Errorf("Aggregator.Run(cancelled ctx) = %v, want nil", err)
	}
}
