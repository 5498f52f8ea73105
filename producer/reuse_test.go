package producer_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/messages"
)

// TestStepReuseRefused: a step command for a (run, step) that was already
// run — the `nats pub imapload.step '{"run":"r1","step":1,…}'` an older README showed
// after a ramp r1, or the same ramp run twice — is refused by the producer
// before it sends anything, on the reply subject of a request and on
// imapload.step.refused for a plain publish, saying when the step was
// commanded; a step that has a result is refused by a producer that never
// ran it. The IMAP server sees no command from a refused step.
func TestStepReuseRefused(t *testing.T) {
	f := newFleet(t, &embedded.IMAPOptions{Users: 4})
	f.start(f.options("c1", 2))
	f.waitLive(1)
	step := `"rate":20,"warmup":"100ms","duration":"1s","stagger":"50ms"`
	f.runStep("c1", "r1", 1, step)
	refusals := make(chan *nats.Msg, 4)
	sub, err := f.nc.ChanSubscribe(messages.StepRefusedSubject, refusals)
	if err != nil {
		t.Fatalf("Subscribe(%s) error = %v", messages.StepRefusedSubject, err)
	}
	defer sub.Unsubscribe()
	before := f.imap.Stats()
	again := `{"run":"r1","step":1,` + step + `}`
	checkRefusal(t, "a request for run r1 step 1 again", f.request(again, 1)[0], "commanded at")
	if err := f.nc.Publish(messages.StepSubject, []byte(again)); err != nil {
		t.Fatalf("Publish(step) error = %v", err)
	}
	select {
	case m := <-refusals:
		var r messages.StepReply
		if err := json.Unmarshal(m.Data, &r); err != nil {
			t.Fatalf("refusal %q: %v", m.Data, err)
		}
		checkRefusal(t, "a plain publish of run r1 step 1 again", r, "commanded at")
	case <-time.After(10 * time.Second):
		t.Fatal("no reply on imapload.step.refused to a plain publish of a step already run")
	}

	// A producer that never ran it: the step's result says it ran.
	publishResult(t, f.js, "r2", 1)
	f.start(f.options("c2", 2))
	f.waitLive(2)
	for _, r := range f.request(`{"run":"r2","step":1,"producers":2,`+step+`}`, 2) {
		checkRefusal(t, "run r2 step 1, which has a result", r, "already has a result (published ")
	}
	if after := f.imap.Stats(); after.Commands != before.Commands || after.Connections != before.Connections {
		t.Errorf("IMAP server saw %d commands and %d connections after the refusals, want none (before: %d, %d)",
			after.Commands-before.Commands, after.Connections-before.Connections, before.Commands, before.Connections)
	}
	if r := f.request(`{"run":"r3","step":1,"producers":2,`+step+`}`, 2)[0]; !r.Accepted {
		t.Errorf("reply to a fresh run r3 = %+v, want accepted", r)
	}
}

func checkRefusal(t *testing.T, what string, r messages.StepReply, want string) {
	t.Helper()
	if r.Accepted || !strings.Contains(r.Error, "a step runs once, so use a fresh run id") || !strings.Contains(r.Error, want) {
		t.Errorf("reply to %s = %+v, want refused: %q, and a fresh run id", what, r, want)
	}
}

// publishResult stores a result of run's step as the aggregator does.
func publishResult(t *testing.T, js jetstream.JetStream, run string, step int) {
	t.Helper()
	ctx := context.Background()
	if _, err := bus.EnsureResults(ctx, js, nil); err != nil {
		t.Fatalf("bus.EnsureResults() error = %v", err)
	}
	b, err := json.Marshal(messages.StepResult{Kind: messages.KindStepResult, Run: run, Step: step, Verdict: messages.VerdictHeld})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, messages.ResultsSubject(run), b, jetstream.WithMsgID(messages.ResultMsgID(run, step, 0))); err != nil {
		t.Fatalf("Publish(result) error = %v", err)
	}
}
