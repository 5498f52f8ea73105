package producer_test

import (
	"fmt"
	"testing"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
)

// TestDovecotClientPhases runs each client command against a real Dovecot
// (see TestDovecotEndToEnd for how to start one): a short step whose mix
// names it beside APPEND and FETCH, as TestClientPhases does against the
// embedded server. Each phase has successes and no error the server caused,
// and the APPENDs' integrity checks ran and passed. The accounts keep what
// the runs append (fewer than the tests' MOVEs and EXPUNGEs take away, and
// imapload-copies is trimmed at 200 messages).
func TestDovecotClientPhases(t *testing.T) {
	dc := dovecotFromEnv(t)
	f := newDovecotFleet(t)
	f.start(dc.options(t, "dcp", dc.password, &testkit.Buffer{}))
	f.waitLive(1)
	var checks messages.Checks
	for i, name := range clientPhases {
		t.Run(name, func(t *testing.T) {
			bs := f.runStep("dcp", "dcphases", i+1, fmt.Sprintf(`"rate":60,"warmup":"500ms","duration":"1500ms","stagger":"200ms",
				"mix":{%q:4,"append":1,"fetch":1},"fetch_target":"recent"`, name))
			p, _ := messages.ParsePhase(name)
			ok := checkPhase(t, bs, p)
			if ok == 0 {
				t.Errorf("phase %s: no success in the window, want some", name)
			} else {
				t.Logf("%s: %d succeeded, service P50 %v", name, ok, quantile(t, bs, p, service, 0.5))
			}
			for _, b := range bs {
				checks.Add(b.Checks)
			}
		})
	}
	t.Logf("integrity checks %+v", checks)
	if checks.Run == 0 || checks.Failed != 0 || checks.Unaddressable != 0 {
		t.Errorf("integrity checks = %+v, want some run, none failed, every APPEND addressable (Dovecot has UIDPLUS)", checks)
	}
}
