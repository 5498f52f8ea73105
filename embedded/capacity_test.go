package embedded_test

import (
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
)

// TestIMAPCapacity: Capacity is Workers/ServiceTime. That the server serves
// exactly that many commands a second is TestIMAPCapacityExact's, on a
// synctest bubble's clock.
func TestIMAPCapacity(t *testing.T) {
	s := startIMAP(t, &embedded.IMAPOptions{Users: 2, Workers: 2, ServiceTime: 10 * time.Millisecond})
	if got := s.Capacity(); got != 200 {
		t.Fatalf("Capacity() = %v, want 200", got)
	}
	c := login(t, s, s.UserName(1))
	if err := c.Noop().Wait(); err != nil {
		t.Errorf("Noop() error = %v", err)
	}
}

func TestIMAPCapacityUnlimited(t *testing.T) {
	tests := []struct {
		name string
		opts embedded.IMAPOptions
	}{
		{name: "no knobs"},
		{name: "pool without service time", opts: embedded.IMAPOptions{Workers: 4}},
		{name: "service time without pool", opts: embedded.IMAPOptions{ServiceTime: time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startIMAP(t, &tt.opts)
			if got := s.Capacity(); got != 0 {
				t.Errorf("Capacity() = %v, want 0 (unlimited)", got)
			}
			c := login(t, s, "user1")
			if err := c.Noop().Wait(); err != nil {
				t.Errorf("Noop() error = %v", err)
			}
		})
	}
}

// TestIMAPSlowAccounts: about half the accounts are slow with SlowFraction
// 0.5, and each serves its mailbox commands. How long a slow account's
// SELECT waits is TestIMAPSlowAccountsExact's, on a synctest bubble's clock.
func TestIMAPSlowAccounts(t *testing.T) {
	s := startIMAP(t, &embedded.IMAPOptions{Users: 100, SlowFraction: 0.5, SlowDelay: time.Millisecond})
	slow, fast := "", ""
	nSlow := 0
	for i := 1; i <= 100; i++ {
		u := s.UserName(i)
		if s.IsSlow(u) {
			nSlow++
			slow = u
		} else {
			fast = u
		}
	}
	if nSlow < 30 || nSlow > 70 {
		t.Fatalf("IsSlow() true for %d of 100 accounts, want about 50", nSlow)
	}
	for _, u := range []string{slow, fast} {
		if _, err := login(t, s, u).Select("INBOX", nil).Wait(); err != nil {
			t.Errorf("Select() as %s error = %v", u, err)
		}
	}
}
