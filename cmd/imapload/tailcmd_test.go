package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

func tailStep(step int, rate, ratio float64, revision int) messages.StepResult {
	return messages.StepResult{
		Kind: messages.KindStepResult, Run: "t1", Step: step, TargetRate: rate, OfferedRate: rate,
		DeliveredRate: rate * ratio, Ratio: ratio, Complete: true, Revision: revision,
		Verdict: messages.VerdictHeld, Producers: []string{"p1"},
		Phases: map[string]messages.PhaseResult{"fetch": {Count: 100, Percentiles: messages.Percentiles{P99: 12.3456}}},
	}
}

// resultsBus is an embedded NATS with the results stream, and a JetStream
// client of it.
func resultsBus(t *testing.T) (*embedded.NATS, jetstream.JetStream) {
	t.Helper()
	ns := startNATS(t, nil)
	js, err := jetstream.New(connect(t, ns.ClientURL()))
	if err == nil {
		_, err = bus.EnsureResults(context.Background(), js, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return ns, js
}

// TestTail prints each published step result in one line, a revision as
// it comes, then the table judged from the latest revisions, and exits
// with the run's verdict.
func TestTail(t *testing.T) {
	t.Parallel()
	ns, js := resultsBus(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	below := tailStep(2, 200, 0.5, 0)
	below.Verdict = messages.VerdictBelow
	corrected := tailStep(2, 200, 0.99, 1) // late batches: step 2 held after all
	for _, r := range []messages.StepResult{tailStep(1, 100, 1, 0), below, corrected} {
		data, _ := json.Marshal(r)
		if _, err := js.Publish(ctx, messages.ResultsSubject("t1"), data); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = js.Publish(ctx, messages.ResultsSubject("t1"), []byte(`{"kind":"step_result","run":`)) // skipped

	out, _, err := runCLI(ctx, "tail", "--nats", ns.ClientURL(), "--run", "t1", "--once")
	if code := exitCode(err); code != verdict.ExitOK {
		t.Fatalf("imapload tail --once exit %d (%v), want %d; output:\n%s", code, err, verdict.ExitOK, out)
	}
	for _, want := range []string{
		"step 1: held: 100 of 100/s delivered (100%); p99 fetch 12.3 ms\n",
		"step 2: below: 100 of 200/s delivered (50%)",
		"step 2 (revision 1): held: 198 of 200/s delivered (99%)",
		"no knee",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("imapload tail output lacks %q; got:\n%s", want, out)
		}
	}
}

func TestTailErrors(t *testing.T) {
	ns := startNATS(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no run", []string{"tail", "--nats", unreachableNATS}, verdict.ExitUsage, `"run" not set`},
		{"bad run", []string{"tail", "--nats", unreachableNATS, "--run", "a.b"}, verdict.ExitUsage, "--run"},
		{"bad threshold", []string{"tail", "--nats", unreachableNATS, "--run", "a", "--threshold", "2"}, verdict.ExitUsage, "--threshold 2"},
		{"nothing published", []string{"tail", "--nats", ns.ClientURL(), "--run", "none", "--once"}, verdict.ExitError, "imapload aggregator"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runCLI(ctx, tt.args...)
			if code := exitCode(err); code != tt.code || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("imapload %s = exit %d, %v; want exit %d, an error containing %q", strings.Join(tt.args, " "), code, err, tt.code, tt.want)
			}
		})
	}
}
