package producer_test

import (
	"slices"
	"testing"
	"time"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
)

// TestScriptedStep offers sessions of a fixed shape at 40 sessions/s for 2 s:
// 80 sessions intended in the window, each a dial, a LOGIN and the script's
// commands, once each, against a server with headroom. A session whose
// commands straddle the window's edges has only some of them counted, so
// the counts may differ from 80 by a session or two, no more.
func TestScriptedStep(t *testing.T) {
	t.Parallel() // waits on a step of its own servers
	f := newFleet(t, nil)
	f.start(f.options("scr", 8))
	f.waitLive(1)
	reply := f.request(`{"run":"scr","step":1,"session_rate":40,"script":"LOGIN SELECT FETCH LOGOUT",
		"warmup":"300ms","duration":"2s","stagger":"100ms"}`, 1)
	if !reply[0].Accepted || reply[0].Rate != 120 {
		t.Fatalf("step reply %+v, want accepted at 120 commands/s (40 sessions/s × 3)", reply[0])
	}
	bs := f.collect("scr", 1).finals(t, 1, 30*time.Second)["scr"]
	checkScripted(t, bs, 80, messages.Select, messages.Fetch, messages.Logout)
}

// TestDovecotScriptedStep runs imaptest's login/select/fetch/logout session
// against a real Dovecot, offered in sessions per second.
func TestDovecotScriptedStep(t *testing.T) {
	dc := dovecotFromEnv(t)
	f := newDovecotFleet(t)
	logs := &testkit.Buffer{}
	f.start(dc.options(t, "dcscript", dc.Password, logs))
	f.waitLive(1)
	bs := f.runStep("dcscript", "dcscript", 1, `"session_rate":30,"script":"login select fetch logout",`+
		`"warmup":"500ms","duration":"2s","stagger":"200ms"`)
	checkScripted(t, bs, 60, messages.Select, messages.Fetch, messages.Logout)
	checkNoPassword(t, map[string][]*messages.SampleBatch{"dcscript": bs}, logs, dc.Password)
}

// checkScripted checks the batches of a scripted step with sessions
// intended in its window: one dial, LOGIN and each command of script per
// session, no error, no command outside the script, and every scheduled
// command completed. A session whose commands straddle the window's edges
// has only some of them counted, so a count may differ from sessions by two.
func checkScripted(t *testing.T, bs []*messages.SampleBatch, sessions uint64, script ...messages.Phase) {
	t.Helper()
	var done, sched uint64
	ok := map[messages.Phase]uint64{}
	for _, b := range bs {
		done += b.Completed
		sched += b.Scheduled
		for _, ps := range b.Phases {
			ok[ps.Phase] += ps.Succeeded
			for _, e := range ps.Errors {
				t.Errorf("%s error %q ×%d (e.g. %q), want none", ps.Phase, e.Kind, e.Count, e.Example)
			}
		}
	}
	want := append([]messages.Phase{messages.Dial, messages.Login}, script...)
	for _, p := range messages.Phases() {
		n := ok[p]
		switch {
		case !slices.Contains(want, p) && n > 0:
			t.Errorf("%s succeeded %d times, want 0: not in the script", p, n)
		case slices.Contains(want, p) && (n+2 < sessions || n > sessions+2):
			t.Errorf("%s succeeded %d times, want %d ± 2 (one per session)", p, n, sessions)
		}
	}
	n := uint64(len(script))
	if done != sched || done+2*n < n*sessions || done > n*sessions+2*n {
		t.Errorf("scheduled %d, completed %d; want equal, %d ± %d (%d commands × %d sessions)",
			sched, done, n*sessions, 2*n, n, sessions)
	}
}
