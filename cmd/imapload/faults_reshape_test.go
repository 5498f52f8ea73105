package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
)

// TestFaultForgedBatchesCannotReshapeStep is issue 10's finding 2 with
// real processes. Around a real step of two producers, anyone on
// imapload.samples.> publishes: a batch 0 from producer "0" claiming a 1 ms
// window (once the step command is answered, from the first real batch);
// after the real finals,
// a batch after p1's final one, 10¹⁵ completions from "c", four batches of
// 2⁶² from "d", and the step's batches again as step 999 (never commanded)
// of the run and of another run. The aggregator, stopped before the step
// and started once all of it is stored, pools the stream in order, so every
// forgery is seen before the result. The result is complete, from the real
// producers alone, with their batches and counts; the seven forgeries are
// counted in rejected; step 999 gets no result, and the reporter (every
// run, --out) writes no folder for the other run and no step 999.
func TestFaultForgedBatchesCannotReshapeStep(t *testing.T) {
	t.Parallel()
	const run, ghost = "fault-reshape", "fault-ghost"
	out := t.TempDir()
	f := startFaultFleet(t, faultOptions{name: "fshape", reportOut: out})
	kill(t, f.aggP)
	js := f.asyncJS(t)
	first := make(chan *messages.SampleBatch, 1)
	subscribe(t, f.nc, messages.StepSamplesFilter(run, 1), func(m *nats.Msg) {
		if b, err := messages.DecodeBatch(m.Data); err == nil && b.Producer == f.ids[0] && b.Seq == 0 {
			select {
			case first <- b:
			default: // a copy: the first is enough
			}
		}
	})
	f.step(t, run, 1, 40, 3*time.Second)
	select {
	case b := <-first:
		f.forge(t, js, forgeAs(b, "0", 0, func(c *messages.SampleBatch) { c.Info.Duration = int64(time.Millisecond) }))
	case <-time.After(time.Minute):
		t.Fatalf("no batch 0 from %s within a minute", f.ids[0])
	}
	real := f.awaitFinals(t, run, 1)
	f.forge(t, js, forgedAround(real, f.ids[0])...)
	f.awaitStored(t, js, 8)

	f.startAggregator(t)
	r := latest(t, f.js, run, 1, time.Minute, nil)
	f.checkWhole(t, r)
	var rejected uint64
	for _, n := range r.Rejected {
		rejected += n
	}
	t.Logf("result: %d batches, %d scheduled, %d succeeded; rejected %v", r.Batches, r.Scheduled, r.Succeeded, r.Rejected)
	if rejected != 7 {
		t.Errorf("result rejected %v (%d in all), want the 7 forged batches of step 1 counted", r.Rejected, rejected)
	}
	f.awaitSettled(t, time.Minute)
	checkNoStep999(t, f.js, out, run, ghost)
}

// forgeAs is a copy of b as producer's batch seq, changed by edit.
func forgeAs(b *messages.SampleBatch, producer string, seq uint64, edit func(*messages.SampleBatch)) *messages.SampleBatch {
	c := *b
	c.Producer, c.Seq = producer, seq
	if edit != nil {
		edit(&c)
	}
	return &c
}

// forgedAround are the forgeries published after the real step: a batch
// after victim's final, 10¹⁵ completions, four batches of 2⁶², and every
// real batch again as step 999 of the run and of fault-ghost.
func forgedAround(real map[string]*messages.SampleBatch, victim string) []*messages.SampleBatch {
	var final, mid *messages.SampleBatch
	for _, b := range real {
		if b.Producer == victim && b.Final {
			final = b
		}
		if b.Producer == victim && b.Seq == 2 {
			mid = b
		}
	}
	out := []*messages.SampleBatch{
		forgeAs(final, victim, final.Seq+1, func(c *messages.SampleBatch) { c.Final, c.From, c.To = true, 0, 1 }),
		forgeAs(mid, "c", 1, func(c *messages.SampleBatch) { c.Scheduled, c.Completed = 1e15, 1e15 }),
	}
	for i := range 4 {
		out = append(out, forgeAs(mid, "d", uint64(i+1), func(c *messages.SampleBatch) { c.Scheduled, c.Completed = 1<<62, 1<<62 }))
	}
	for _, b := range real {
		out = append(out, forgeAs(b, b.Producer, b.Seq, func(c *messages.SampleBatch) { c.Step = 999 }))
		out = append(out, forgeAs(b, b.Producer, b.Seq, func(c *messages.SampleBatch) { c.Run, c.Step = "fault-ghost", 999 }))
	}
	return out
}

// forge publishes batches as anyone allowed on imapload.samples.> can.
func (f *faultFleet) forge(t *testing.T, js jetstream.JetStream, batches ...*messages.SampleBatch) {
	t.Helper()
	for _, b := range batches {
		data, err := messages.EncodeBatch(b)
		if err != nil {
			t.Fatalf("EncodeBatch: %v", err)
		}
		f.forgeRaw(t, js, messages.SamplesSubject(b.Run, b.Step, b.Producer), data, messages.BatchMsgID(b.Run, b.Step, b.Producer, b.Seq))
	}
}

// awaitFinals waits until the stream holds every producer's final batch of
// run's step and returns the step's batches.
func (f *faultFleet) awaitFinals(t *testing.T, run string, step int) map[string]*messages.SampleBatch {
	t.Helper()
	var batches map[string]*messages.SampleBatch
	testkit.WaitFor(t, time.Minute, "every producer's final batch in the stream", func() bool {
		batches, _ = streamBatches(t, f.js, run, step)
		finals := 0
		for _, b := range batches {
			if b.Final {
				finals++
			}
		}
		return finals >= len(f.ids)
	})
	return batches
}

// checkNoStep999 checks that no result of step 999 is in the stream, and
// that the reporter wrote run's report without it and nothing for ghost.
func checkNoStep999(t *testing.T, js jetstream.JetStream, out, run, ghost string) {
	t.Helper()
	for _, name := range []string{run, ghost} {
		if rs := streamResults(t, js, name)[999]; len(rs) != 0 {
			t.Errorf("%s step 999 (never commanded) has %d results, want none", name, len(rs))
		}
	}
	var rep messages.RunReport
	testkit.WaitFor(t, 30*time.Second, "the reporter's report.json of "+run, func() bool {
		var err error
		rep, err = tryReadReport(filepath.Join(out, run, "report.json"))
		return err == nil && len(rep.Steps) > 0
	})
	for _, s := range rep.Steps {
		if s.Step != 1 {
			t.Errorf("%s report.json has step %d, want step 1 alone", run, s.Step)
		}
	}
	if _, err := os.Stat(filepath.Join(out, ghost)); !os.IsNotExist(err) {
		t.Errorf("report folder %s: %v, want none (its only step was never commanded)", filepath.Join(out, ghost), err)
	}
}
