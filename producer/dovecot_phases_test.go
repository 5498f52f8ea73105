package producer_test

import (
	"testing"

	"github.com/imapload/imapload/internal/testkit"
)

// TestDovecotClientPhases runs each client command against a real Dovecot
// (see TestDovecotEndToEnd for how to start one), as TestClientPhases does
// against the embedded server: a short step per phase whose mix names it
// beside APPEND and FETCH. The accounts keep what the runs append (fewer
// messages than the steps' MOVEs and EXPUNGEs take away), and
// imapload-copies is trimmed past 200 messages. Dovecot's IDLE pushes an
// EXISTS some 0.5 s after the APPEND, so the idle step keeps each session
// busy and some of its commands wait in the queue.
func TestDovecotClientPhases(t *testing.T) {
	dc := dovecotFromEnv(t)
	f := newDovecotFleet(t)
	f.start(dc.options(t, "dcp", dc.Password, &testkit.Buffer{}))
	f.waitLive(1)
	runClientPhases(t, f, "dcp", `"rate":60,"warmup":"500ms","duration":"1500ms","stagger":"200ms"`)
}
