package producer_test

import (
	"fmt"
	"testing"

	"github.com/imapload/imapload/aggregator"
	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// TestEmptyMailboxesAreNotTheServersShortfall: against fresh, empty
// accounts, FETCH and STORE have no message to address and are never sent.
// Counted as undelivered, they would make the step read as the server
// delivering two thirds of the target: a confident, wrong knee. The pooled
// step is inconclusive (unaddressable) instead, with what to do, and the
// server is charged with no error.
func TestEmptyMailboxesAreNotTheServersShortfall(t *testing.T) {
	t.Parallel() // waits on a step of its own servers
	f := newFleet(t, &embedded.IMAPOptions{SeedMessages: -1})
	f.start(f.options("empty", 8))
	f.waitLive(1)
	body := `"rate":90,"warmup":"300ms","duration":"2s","stagger":"100ms","mix":{"list":1,"fetch":1,"store":1}`
	bs := f.runStep("empty", "empty", 1, body)
	cmd, err := messages.ParseStepCommand(fmt.Appendf(nil, `{"run":"empty","step":1,%s}`, body))
	if err != nil {
		t.Fatal(err)
	}
	pool := aggregator.NewCommandPool(cmd, nil)
	for _, b := range bs {
		if _, err := pool.Add(b); err != nil {
			t.Fatalf("Pool.Add() error = %v", err)
		}
	}
	r := pool.Result()
	if r.Verdict != messages.VerdictInconclusive || !verdict.Has(r, messages.ReasonUnaddressable) {
		t.Errorf("verdict %s, reasons %+v (ratio %.2f); want inconclusive: %s", r.Verdict, r.Reasons, r.Ratio, messages.ReasonUnaddressable)
	}
	if failed, _ := verdict.Failed(r); failed != 0 {
		t.Errorf("the server is charged with %d failures (errors %+v), want 0", failed, r.Errors)
	}
}
