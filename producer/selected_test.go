package producer_test

import (
	"strings"
	"testing"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/messages"
)

// TestFailedSelectCausesNoClientErrors runs a step against a server that
// answers NO to a fifth of the mailbox commands, SELECT included. A failed
// SELECT leaves no mailbox selected (RFC 9051 §6.3.2); the producer must not
// then send FETCH or STORE, which the server would refuse as a client bug.
// The server's NOs are recorded as its errors, and every other error kind is
// the generator's, marked as such.
func TestFailedSelectCausesNoClientErrors(t *testing.T) {
	t.Parallel() // waits on NATS outages and timeouts, with servers of its own
	f := newFleet(t, &embedded.IMAPOptions{NoFraction: 0.2, Seed: 3})
	f.start(f.options("sel", 8))
	f.waitLive(1)
	bs := f.runStep("sel", "sel", 1, `"rate":200,"warmup":"300ms","duration":"2s","stagger":"100ms",
		"mix":{"select":2,"fetch":2,"store":1,"append":1,"list":1}`)
	selectNO := uint64(0)
	for _, b := range bs {
		for _, ps := range b.Phases {
			for _, e := range ps.Errors {
				checkKind(t, ps.Phase, e)
				if ps.Phase == messages.Select && strings.Contains(e.Kind, "injected fault") {
					selectNO += e.Count
				}
			}
		}
	}
	if selectNO == 0 {
		t.Errorf("no SELECT answered NO [SERVERBUG] injected fault in the window, want some (NoFraction 0.2)")
	}
}

// checkKind fails on an error kind that is neither the server's injected
// fault (or a timeout) nor marked as the generator's.
func checkKind(t *testing.T, p messages.Phase, e messages.ErrorCount) {
	t.Helper()
	switch {
	case strings.Contains(e.Kind, "CLIENTBUG") || strings.Contains(e.Kind, "selected state"):
		t.Errorf("%s error %q ×%d: the producer sent a command its session state did not allow", p, e.Kind, e.Count)
	case strings.HasPrefix(e.Kind, messages.GeneratorKind):
		t.Logf("%s: generator error %q ×%d", p, e.Kind, e.Count)
	case strings.Contains(e.Kind, "injected fault") || e.Kind == "timeout":
	default:
		t.Errorf("%s error %q ×%d (e.g. %q): want only the server's injected NO, or a kind starting %q",
			p, e.Kind, e.Count, e.Example, messages.GeneratorKind)
	}
}
