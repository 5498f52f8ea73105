package producer_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
)

// TestFleetDeliversOfferedRate runs three producers, told apart server-side
// by their source addresses, at a fleet rate of 900 commands/s against a
// server with headroom: each offers a third, the fleet delivers ≥ 99%, and
// the same account is logged in from two producers at once.
func TestFleetDeliversOfferedRate(t *testing.T) {
	f := newFleet(t, &embedded.IMAPOptions{Users: 12})
	ids := []string{"p1", "p2", "p3"}
	for i, id := range ids {
		o := f.options(id, 12)
		o.LocalAddr = fmt.Sprintf("127.0.0.%d", i+2)
		o.Queue = 300 // a second of commands: a short hiccup of the shared test machine is absorbed, not dropped
		f.start(o)
	}
	f.waitLive(3)
	tries, tolerable := 3, 250*time.Millisecond
	if raceEnabled { // delivery is not checked: one attempt, however slow
		tries, tolerable = 1, time.Hour
	}
	var shared sharedAccount
	got := unstalled(t, tries, tolerable, func(i int) (map[string][]*messages.SampleBatch, error) {
		col := f.collect("fleet", i+1)
		cmd := fmt.Sprintf(`{"run":"fleet","step":%d,"rate":900,"warmup":"1s","duration":"3s","stagger":"600ms"}`, i+1)
		replies, err := f.ask(cmd, 3)
		if err != nil {
			return nil, err
		}
		for j, r := range replies {
			if r.Producer != ids[j] || !r.Accepted || r.Rate != 300 || r.Producers != 3 {
				t.Errorf("step reply %d = %+v, want %s accepted at 300/s of 3 producers", j, r, ids[j])
			}
		}
		if shared, err = sharedLogin(f.imap, 4*time.Second); err != nil {
			return nil, err
		}
		return col.await(3, 15*time.Second)
	})
	t.Logf("account %s logged in from %v at once", shared.user, shared.hosts)
	checkBatches(t, got)
	var scheduled, completed uint64
	for _, id := range ids {
		bs := got[id]
		if info := bs[0].Info; info.Rate != 300 || info.FleetRate != 900 || info.Producers != 3 {
			t.Errorf("%s StepInfo = %+v, want rate 300 of fleet 900 over 3 producers", id, info)
		}
		s, c, d := sums(bs)
		t.Logf("%s: %d batches, scheduled %d, completed %d, dropped %d", id, len(bs), s, c, d)
		if s < 899 || s > 901 {
			t.Errorf("%s scheduled %d commands in the 3 s window, want 900 ± 1", id, s)
		}
		scheduled, completed = scheduled+s, completed+c
	}
	delivered := float64(completed) / 3
	switch {
	case raceEnabled:
		t.Logf("race detector on: fleet delivered %.1f commands/s, not checked", delivered)
	case delivered < 0.99*900:
		t.Errorf("fleet delivered %.1f commands/s (%d of %d), want ≥ 99%% of 900", delivered, completed, scheduled)
	}
}

type sharedAccount struct {
	user  string
	hosts []string
}

// sharedLogin polls the server's logged-in sessions until one account is
// logged in from two source addresses (two producers) at the same time.
func sharedLogin(srv *embedded.IMAP, within time.Duration) (sharedAccount, error) {
	var found sharedAccount
	ok := testkit.Poll(within, func() bool {
		byUser := map[string]map[string]bool{}
		for _, s := range srv.Sessions() {
			if byUser[s.User] == nil {
				byUser[s.User] = map[string]bool{}
			}
			byUser[s.User][host(s.RemoteAddr)] = true
		}
		for u, hosts := range byUser {
			if len(hosts) >= 2 {
				found.user = u
				for h := range hosts {
					found.hosts = append(found.hosts, h)
				}
				return true
			}
		}
		return false
	})
	if !ok {
		return found, fmt.Errorf("no account logged in from two producers at once within %v", within)
	}
	return found, nil
}
