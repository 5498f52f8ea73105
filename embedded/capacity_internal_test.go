package embedded

import (
	"cmp"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"
)

func TestServiceEnd(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	const service = 10 * time.Millisecond
	tests := []struct {
		name string
		free time.Time // when the slot's previous command ended on schedule
		now  time.Time
		want time.Time
	}{
		{name: "never used", free: time.Time{}, now: t0, want: t0.Add(service)},
		{name: "taken over on time", free: t0, now: t0, want: t0.Add(service)},
		{name: "timer fired late", free: t0, now: t0.Add(time.Millisecond), want: t0.Add(service)},
		{name: "idle slot", free: t0, now: t0.Add(time.Second), want: t0.Add(time.Second + service)},
		{name: "previous command aborted", free: t0.Add(5 * time.Millisecond), now: t0, want: t0.Add(service)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := serviceEnd(tt.free, tt.now, service); !got.Equal(tt.want) {
				t.Errorf("serviceEnd(%v, %v) = %v, want %v", tt.free, tt.now, got, tt.want)
			}
		})
	}
}

func TestSlowAccountSpread(t *testing.T) {
	tests := []struct {
		fraction float64
		min, max int // of 1000 numbered accounts
	}{
		{0, 0, 0},
		{0.1, 60, 140},
		{0.5, 450, 550},
		{1, 1000, 1000},
	}
	for _, tt := range tests {
		n := 0
		for i := 1; i <= 1000; i++ {
			if slowAccount(UserName(i), tt.fraction) {
				n++
			}
		}
		if n < tt.min || n > tt.max {
			t.Errorf("slowAccount(user1..user1000, %v) = %d slow, want %d..%d", tt.fraction, n, tt.min, tt.max)
		}
	}
}

// TestIMAPCapacityExact runs 16 clients in a closed loop against 2 workers
// of 10 ms (200 commands/s) on the fake clock of a synctest bubble: 160
// commands take exactly 160 × 10 ms / 2 = 800 ms, so the server neither
// beats its capacity nor falls short of it, however busy the machine is.
func TestIMAPCapacityExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const clients, each, service = 16, 10, 10 * time.Millisecond
		s := startPipeIMAP(t, &IMAPOptions{Users: clients, Workers: 2, ServiceTime: service})
		conns := make([]*imapclient.Client, clients)
		for i := range conns {
			conns[i] = s.login(t, UserName(i+1))
		}
		begin := time.Now()
		var wg sync.WaitGroup
		for _, c := range conns {
			wg.Go(func() { closedLoop(t, c, each) })
		}
		wg.Wait()
		if got, want := time.Since(begin), clients*each*service/2; got != want {
			t.Errorf("%d commands on 2 workers of %v took %v, want %v (200 commands/s)", clients*each, service, got, want)
		}
	})
}

// closedLoop alternates NOOP and SELECT n times, each sent when the last
// one is answered.
func closedLoop(t *testing.T, c *imapclient.Client, n int) {
	for i := range n {
		var err error
		if i%2 == 0 {
			err = c.Noop().Wait()
		} else {
			_, err = c.Select("INBOX", nil).Wait()
		}
		if err != nil {
			t.Errorf("command %d error = %v", i, err)
			return
		}
	}
}

// TestIMAPSlowAccountsExact: a slow account's SELECT waits exactly
// SlowDelay on the bubble's clock; a fast account's does not wait.
func TestIMAPSlowAccountsExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const delay = 30 * time.Millisecond
		s := startPipeIMAP(t, &IMAPOptions{Users: 100, SlowFraction: 0.5, SlowDelay: delay})
		for _, user := range slowAndFast(t, s.IMAP) {
			want := time.Duration(0)
			if s.IsSlow(user) {
				want = delay
			}
			c := s.login(t, user)
			begin := time.Now()
			if _, err := c.Select("INBOX", nil).Wait(); err != nil {
				t.Fatalf("Select() as %s error = %v", user, err)
			}
			if got := time.Since(begin); got != want {
				t.Errorf("SELECT as %s (slow %v) took %v, want %v", user, s.IsSlow(user), got, want)
			}
		}
	})
}

// slowAndFast returns the first slow account and the first fast one.
func slowAndFast(t *testing.T, s *IMAP) []string {
	t.Helper()
	var slow, fast string
	for i := 1; i <= s.opts.Users && (slow == "" || fast == ""); i++ {
		if u := UserName(i); s.IsSlow(u) {
			slow = cmp.Or(slow, u)
		} else {
			fast = cmp.Or(fast, u)
		}
	}
	if slow == "" || fast == "" {
		t.Fatalf("IsSlow() gives slow %q, fast %q among %d accounts, want one of each", slow, fast, s.opts.Users)
	}
	return []string{slow, fast}
}

// TestIMAPCloseDoesNotWaitForService: Close with a command holding the
// only slot for a minute returns at once on the bubble's clock, and the
// command fails.
func TestIMAPCloseDoesNotWaitForService(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startPipeIMAP(t, &IMAPOptions{Workers: 1, ServiceTime: time.Minute})
		c := s.client(t)
		cmd := c.Noop()
		synctest.Wait()
		if n := s.Stats().Commands; n != 1 {
			t.Fatalf("Stats().Commands = %d, want the NOOP in service", n)
		}
		begin := time.Now()
		if err := s.Close(); err != nil {
			t.Fatalf("Close() error = %v", err)
		}
		if took := time.Since(begin); took != 0 {
			t.Errorf("Close() took %v with a command in service, want no wait", took)
		}
		if err := cmd.Wait(); err == nil {
			t.Error("Noop() succeeded after Close, want an error")
		}
	})
}
