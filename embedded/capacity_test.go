package embedded_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/imapload/imapload/embedded"
)

func TestIMAPCapacity(t *testing.T) {
	const clients = 16
	s := startIMAP(t, &embedded.IMAPOptions{Users: clients, Workers: 2, ServiceTime: 10 * time.Millisecond})
	if got := s.Capacity(); got != 200 {
		t.Fatalf("Capacity() = %v, want 200", got)
	}
	conns := make([]*imapclient.Client, clients)
	for i := range conns {
		conns[i] = login(t, s, s.UserName(i+1))
	}
	// The server must never beat its capacity. Falling short means the
	// clients were starved of CPU (2 shared cores): measure again, at most
	// three times in all.
	for attempt := 1; attempt <= 3; attempt++ {
		rate := throughput(t, conns, 1500*time.Millisecond)
		t.Logf("attempt %d: %.0f commands/s (capacity 200/s)", attempt, rate)
		if rate > 250 {
			t.Fatalf("throughput = %.0f commands/s, want at most 200 + 25%%", rate)
		}
		if rate >= 150 {
			return
		}
	}
	t.Errorf("throughput stayed below 150 commands/s, want 200 ± 25%%")
}

// throughput runs every client in a closed loop for window and returns
// the completed commands per second.
func throughput(t *testing.T, conns []*imapclient.Client, window time.Duration) float64 {
	var done atomic.Int64
	var wg sync.WaitGroup
	begin := time.Now()
	end := begin.Add(window)
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			closedLoop(t, c, end, &done)
		}()
	}
	time.Sleep(window) // the measurement window itself, not a synchronization
	measured := done.Load()
	elapsed := time.Since(begin)
	wg.Wait()
	return float64(measured) / elapsed.Seconds()
}

// closedLoop alternates NOOP and SELECT until end, counting completions.
func closedLoop(t *testing.T, c *imapclient.Client, end time.Time, done *atomic.Int64) {
	for n := 0; time.Now().Before(end); n++ {
		var err error
		if n%2 == 0 {
			err = c.Noop().Wait()
		} else {
			_, err = c.Select("INBOX", nil).Wait()
		}
		if err != nil {
			t.Errorf("command %d error = %v", n, err)
			return
		}
		done.Add(1)
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

func TestIMAPSlowAccounts(t *testing.T) {
	const delay = 30 * time.Millisecond
	s := startIMAP(t, &embedded.IMAPOptions{Users: 100, SlowFraction: 0.5, SlowDelay: delay})
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
	if got := selectTime(t, s, slow); got < delay {
		t.Errorf("slow account %s: SELECT took %v, want >= %v", slow, got, delay)
	}
	if got := selectTime(t, s, fast); got >= delay/2 {
		t.Errorf("fast account %s: SELECT took %v, want < %v", fast, got, delay/2)
	}
}

// selectTime logs in as user and returns the fastest of three SELECTs.
func selectTime(t *testing.T, s *embedded.IMAP, user string) time.Duration {
	t.Helper()
	c := login(t, s, user)
	best := time.Hour
	for range 3 {
		begin := time.Now()
		if _, err := c.Select("INBOX", nil).Wait(); err != nil {
			t.Fatalf("Select() as %s error = %v", user, err)
		}
		best = min(best, time.Since(begin))
	}
	return best
}
