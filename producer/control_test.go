package producer_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/producer"
)

// TestStepRefusals sends invalid step commands: each gets a clear refusal,
// and the producer keeps running.
func TestStepRefusals(t *testing.T) {
	f := newFleet(t, &embedded.IMAPOptions{Users: 4})
	f.start(f.options("c1", 4))
	f.waitLive(1)
	refused := []struct {
		name, cmd, errHas string
		echo              bool
	}{
		{"negative rate", `{"run":"ctl","step":1,"rate":-5,"duration":"1s"}`, "rate", true},
		{"unknown field", `{"run":"ctl","step":1,"rate":5,"duration":"1s","sessions":3}`, "unknown field", false},
		{"not JSON", `rate=5`, "malformed JSON", false},
		{"bad run name", `{"run":"a.b","step":1,"rate":5,"duration":"1s"}`, "run", false},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			rep := f.request(tt.cmd, 1)[0]
			if rep.Accepted || rep.Producer != "c1" || !strings.Contains(rep.Error, tt.errHas) {
				t.Errorf("reply to %s = %+v, want refused by c1 with an error mentioning %q", tt.cmd, rep, tt.errHas)
			}
			if tt.echo && (rep.Run != "ctl" || rep.Step != 1) {
				t.Errorf("reply to %s echoes run %q step %d, want ctl 1", tt.cmd, rep.Run, rep.Step)
			}
		})
	}
	// Every problem is an item of its own, and the joined error is one line.
	rep := f.request(`{"run":"","step":1,"rate":-1,"duration":"1s","sessions":3}`, 1)[0]
	if len(rep.Problems) != 3 || strings.Contains(rep.Error, "\n") || !strings.Contains(rep.Error, `unknown field "sessions"; run: missing; rate: -1`) {
		t.Errorf("reply to a command with three problems = error %q, problems %q; want three items, joined by '; '", rep.Error, rep.Problems)
	}
	if rep := f.request(`{"run":"ctl","step":1,"rate":5,"duration":"100ms"}`, 1)[0]; !rep.Accepted {
		t.Errorf("reply to a valid command after refusals = %+v, want accepted", rep)
	}
}

// TestStepLifecycle walks a producer through a plain publish without a reply
// subject, an idempotent repeat, a preempting step, and a clean shutdown that
// publishes the running step's final batch, unregisters and leaves no
// goroutine behind.
func TestStepLifecycle(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // registered first, so it runs after every other cleanup
	f := newFleet(t, &embedded.IMAPOptions{Users: 4})
	r := f.start(f.options("c1", 4))
	f.waitLive(1)
	first, second := f.collect("ctl", 1), f.collect("ctl", 2)
	step1 := `{"run":"ctl","step":1,"rate":50,"warmup":"200ms","duration":"5s","stagger":"100ms"}`
	if err := f.nc.Publish(messages.StepSubject, []byte(step1)); err != nil {
		t.Fatalf("Publish(step 1) error = %v", err)
	}
	testkit.WaitFor(t, 5*time.Second, "step 1 batch 0", func() bool { b, _ := first.snapshot(); return len(b["c1"]) > 0 })
	if rep := f.request(step1, 1)[0]; !rep.Accepted || rep.Rate != 50 || rep.Producers != 1 {
		t.Errorf("reply to a repeat of step 1 = %+v, want accepted at 50/s of 1 producer", rep)
	}
	step2 := `{"run":"ctl","step":2,"rate":50,"warmup":"100ms","duration":"30s","stagger":"100ms"}`
	if rep := f.request(step2, 1)[0]; !rep.Accepted || rep.Step != 2 {
		t.Errorf("reply to step 2 = %+v, want accepted", rep)
	}
	bs1 := first.finals(t, 1, 10*time.Second)["c1"]
	if last := bs1[len(bs1)-1]; last.To >= int64(5*time.Second) {
		t.Errorf("step 1 final batch to %v, want it cut short by step 2", time.Duration(last.To))
	}
	testkit.WaitFor(t, 5*time.Second, "step 2 batch 0", func() bool { b, _ := second.snapshot(); return len(b["c1"]) > 0 })
	checkShutdown(t, f, r, second)
}

// checkShutdown cancels the producer and checks that it returns nil after
// publishing the running step's final batch and unregistering.
func checkShutdown(t *testing.T, f *fleet, r *running, running *collector) {
	t.Helper()
	if err := r.stop(t); err != nil {
		t.Fatalf("Run() after cancel = %v, want nil", err)
	}
	running.finals(t, 1, 5*time.Second)
	kv, err := f.js.KeyValue(context.Background(), messages.ProducersBucket)
	if err != nil {
		t.Fatalf("KeyValue() error = %v", err)
	}
	if keys, err := kv.Keys(context.Background()); !errors.Is(err, jetstream.ErrNoKeysFound) {
		t.Errorf("registry keys after Run returned = %v (%v), want none", keys, err)
	}
}

func TestRunTwice(t *testing.T) {
	f := newFleet(t, nil)
	r := f.start(f.options("twice", 2))
	f.waitLive(1)
	if err := r.p.Run(context.Background()); !errors.Is(err, producer.ErrRunTwice) {
		t.Errorf("second Run() error = %v, want ErrRunTwice", err)
	}
}
