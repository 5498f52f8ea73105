package producer_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/producer"
)

// holdStep runs one step holding connections on the fleet's only producer,
// "h1", and returns its batches.
func (f *fleet) holdStep(t *testing.T, edit func(*producer.Options), rest string) []*messages.SampleBatch {
	t.Helper()
	o := f.options("h1", 4)
	if edit != nil {
		edit(o)
	}
	f.start(o)
	f.waitLive(1)
	return f.runStep("h1", "hold", 1, rest)
}

// checkHeld: no held connection was dropped, the count never fell, the
// window's last batch held all want throughout, and each set-up (phase
// hold) succeeded.
func checkHeld(t *testing.T, bs []*messages.SampleBatch, want int) {
	t.Helper()
	var setups, failed uint64
	var last *messages.SampleBatch
	for _, b := range bs {
		if b.Info.Connections != want {
			t.Errorf("batch %d: Info.Connections = %d, want %d", b.Seq, b.Info.Connections, want)
		}
		if b.Health.HeldDrops != 0 {
			t.Errorf("batch %d [%v, %v]: %d held connections dropped, want none", b.Seq,
				time.Duration(b.From), time.Duration(b.To), b.Health.HeldDrops)
		}
		if last != nil && b.Health.Held < last.Health.Held {
			t.Errorf("batch %d: held %d, fewer than the %d of batch %d, with no drop", b.Seq, b.Health.Held, last.Health.Held, last.Seq)
		}
		if b.To > 0 && b.Seq > 0 {
			last = b
		}
		if ph := b.PhaseStats(messages.Hold); ph != nil {
			setups += ph.Attempted
			failed += ph.Attempted - ph.Succeeded
			for _, e := range ph.Errors {
				t.Errorf("batch %d: hold set-up failed: %s ×%d (%s)", b.Seq, e.Kind, e.Count, e.Example)
			}
		}
		for _, p := range []messages.Phase{messages.Dial, messages.Login} {
			if ph := b.PhaseStats(p); ph != nil && ph.Attempted > 4 {
				t.Errorf("batch %d: phase %s attempted %d: held connections counted as sessions' set-up", b.Seq, p, ph.Attempted)
			}
		}
	}
	if failed != 0 {
		t.Errorf("hold set-ups: %d of %d failed, want none", failed, setups)
	}
	// How soon all are up depends on the host's speed (2,000 Dovecot logins
	// on a loaded 2-core machine can outlast the stagger and the warm-up),
	// so the window's first batches are not judged on it; the last one is:
	// by the end every connection is held, and none was lost on the way.
	if last == nil {
		t.Errorf("no batch inside the window")
	} else if last.Health.Held != uint32(want) || last.Health.HeldMin != uint32(want) {
		t.Errorf("last batch %d [%v, %v]: held %d, held min %d; want %d, %d", last.Seq,
			time.Duration(last.From), time.Duration(last.To), last.Health.Held, last.Health.HeldMin, want, want)
	}
}

// TestHoldEmbedded holds 300 IDLE connections against the embedded server
// while 4 sessions serve 40 commands/s, re-IDLEing every 300 ms: all are
// held through the window, their set-up is phase hold (recorded in the
// window only for those set up in it, here none), and the rate is intact.
func TestHoldEmbedded(t *testing.T) {
	const conns = 300
	producer.RaiseNoFile(t, 4*conns) // both ends in this process
	f := newFleet(t, &embedded.IMAPOptions{Users: 30})
	bs := f.holdStep(t, func(o *producer.Options) { o.IdlePeriod = 300 * time.Millisecond },
		fmt.Sprintf(`"rate":40,"connections":%d,"warmup":"2s","stagger":"1s","duration":"2s"`, conns))
	checkBatches(t, map[string][]*messages.SampleBatch{"h1": bs})
	checkHeld(t, bs, conns)
	s, c, d := sums(bs)
	if s == 0 || c < s*99/100 || d != 0 {
		t.Errorf("scheduled %d, completed %d, dropped %d; want ≥ 99%% completed", s, c, d)
	}
}

// TestHoldSetupInWindow starts the held connections inside the window (no
// warm-up): each set-up is recorded as phase hold, none as dial or login.
func TestHoldSetupInWindow(t *testing.T) {
	const conns = 50
	f := newFleet(t, nil)
	bs := f.holdStep(t, nil, fmt.Sprintf(`"rate":20,"connections":%d,"warmup":"0s","stagger":"200ms","duration":"1500ms"`, conns))
	var setups uint64
	for _, b := range bs {
		if ph := b.PhaseStats(messages.Hold); ph != nil {
			setups += ph.Succeeded
			if ph.Response.Count != ph.Succeeded {
				t.Errorf("batch %d: hold latencies %d, successes %d", b.Seq, ph.Response.Count, ph.Succeeded)
			}
		}
	}
	if setups != conns {
		t.Errorf("hold set-ups recorded = %d, want %d", setups, conns)
	}
	final := bs[len(bs)-1]
	if !final.Final || final.Health.Held != conns {
		t.Errorf("final batch: final %v, held %d; want the count at the window's end, %d", final.Final, final.Health.Held, conns)
	}
}

// TestHoldReconnects drops every connection in the middle of the window:
// the held ones count as drops, the window's minimum shows the gap, and
// they are set up again (after a jittered backoff) and held by the end.
func TestHoldReconnects(t *testing.T) {
	const conns = 40
	f := newFleet(t, nil)
	f.start(f.options("h1", 2))
	f.waitLive(1)
	col := f.collect("hold", 1)
	f.request(fmt.Sprintf(`{"run":"hold","step":1,"rate":10,"connections":%d,"warmup":"1s","stagger":"300ms","duration":"3s"}`, conns), 1)
	testkit.WaitFor(t, 20*time.Second, "a batch 500 ms into the window", func() bool {
		got, _ := col.snapshot()
		for _, b := range got["h1"] {
			if b.To > int64(500*time.Millisecond) {
				return true
			}
		}
		return false
	})
	f.imap.DropAll()
	bs := col.finals(t, 1, 30*time.Second)["h1"]
	var drops uint64
	least := uint32(conns)
	for _, b := range bs {
		drops += b.Health.HeldDrops
		if b.To > 0 {
			least = min(least, b.Health.HeldMin)
		}
	}
	if drops < conns || least >= conns {
		t.Errorf("held drops %d, window minimum %d; want ≥ %d drops and a minimum under %d", drops, least, conns, conns)
	}
	if final := bs[len(bs)-1]; final.Health.Held != conns {
		t.Errorf("final batch: held %d, want %d set up again", final.Health.Held, conns)
	}
}
