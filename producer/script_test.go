package producer_test

import (
	"testing"
	"time"

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
	for _, p := range []messages.Phase{messages.Dial, messages.Login, messages.Select, messages.Fetch, messages.Logout} {
		if n := ok[p]; n < 78 || n > 82 {
			t.Errorf("%s succeeded %d times, want 80 ± 2 (one per session)", p, n)
		}
	}
	if ok[messages.List] != 0 || ok[messages.Store] != 0 || ok[messages.Append] != 0 {
		t.Errorf("commands outside the script were sent: %v", ok)
	}
	if done != sched || done < 3*78 || done > 3*82 {
		t.Errorf("scheduled %d, completed %d; want equal, 240 ± 6 (3 commands × 80 sessions)", sched, done)
	}
}
