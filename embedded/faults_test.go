package embedded_test

import (
	"net"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/internal/testkit"
)

func TestIMAPNoFraction(t *testing.T) {
	s := startIMAP(t, &embedded.IMAPOptions{NoFraction: 1})
	c := login(t, s, "user1") // LOGIN is never failed on purpose
	_, err := c.Select("INBOX", nil).Wait()
	if err == nil || !strings.Contains(err.Error(), "injected fault") || !strings.Contains(err.Error(), "SERVERBUG") {
		t.Fatalf("Select() error = %v, want NO [SERVERBUG] injected fault", err)
	}
	if err := c.Noop().Wait(); err != nil {
		t.Errorf("Noop() error = %v, want none (NOOP is never failed on purpose)", err)
	}
	if got := s.Stats().NoReplies; got != 1 {
		t.Errorf("Stats().NoReplies = %d, want 1", got)
	}
}

func TestIMAPDropFraction(t *testing.T) {
	const conns = 8
	s := startIMAP(t, &embedded.IMAPOptions{DropFraction: 1, Seed: 7})
	for i := range conns {
		c := dial(t, s)
		if n, err := runUntilError(c, 6); err == nil {
			t.Errorf("connection %d: %d commands succeeded, want the connection dropped", i, n)
		}
	}
	if got := s.Stats().Dropped; got != conns {
		t.Errorf("Stats().Dropped = %d, want %d", got, conns)
	}
	testkit.WaitFor(t, waitLong, "dropped connections to close", func() bool { return s.Stats().Active == 0 })
}

// runUntilError logs in and sends NOOPs, returning how many commands
// succeeded before the first error.
func runUntilError(c *imapclient.Client, max int) (int, error) {
	if err := c.Login("user1", "secret").Wait(); err != nil {
		return 0, err
	}
	for n := 1; n < max; n++ {
		if err := c.Noop().Wait(); err != nil {
			return n, err
		}
	}
	return max, nil
}

func TestIMAPDropFractionPartial(t *testing.T) {
	const conns = 40
	s := startIMAP(t, &embedded.IMAPOptions{DropFraction: 0.5, Seed: 1})
	failed := 0
	for range conns {
		c, err := imapclient.DialInsecure(s.Addr(), nil)
		if err != nil {
			t.Fatalf("DialInsecure() error = %v", err)
		}
		if _, err := runUntilError(c, 5); err != nil {
			failed++
		}
		c.Close()
	}
	if got := s.Stats().Dropped; got != uint64(failed) || failed < conns/5 || failed > conns*4/5 {
		t.Errorf("%d of %d connections failed, Stats().Dropped = %d; want about half, equal", failed, conns, got)
	}
}

func TestIMAPDropAll(t *testing.T) {
	s := startIMAP(t, nil)
	a, b := login(t, s, "user1"), login(t, s, "user2")
	testkit.WaitFor(t, waitLong, "two sessions", func() bool { return len(s.Sessions()) == 2 })
	s.DropAll()
	for name, c := range map[string]*imapclient.Client{"a": a, "b": b} {
		if err := c.Noop().Wait(); err == nil {
			t.Errorf("client %s: Noop() after DropAll succeeded, want an error", name)
		}
	}
	testkit.WaitFor(t, waitLong, "sessions to end", func() bool { return len(s.Sessions()) == 0 && s.Stats().Active == 0 })
	if got := s.Stats().Dropped; got != 2 {
		t.Errorf("Stats().Dropped = %d, want 2", got)
	}
	c := login(t, s, "user3") // the server still accepts
	if err := c.Noop().Wait(); err != nil {
		t.Errorf("Noop() on a new connection after DropAll error = %v", err)
	}
}

func TestIMAPDropUnblocksQueuedCommand(t *testing.T) {
	// One worker, a long service time: DropAll must not wait for the queue.
	s := startIMAP(t, &embedded.IMAPOptions{Workers: 1, ServiceTime: 2 * waitLong})
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatalf("net.Dial() error = %v", err)
	}
	defer conn.Close()
	c := imapclient.New(conn, nil)
	defer c.Close()
	if err := c.WaitGreeting(); err != nil {
		t.Fatalf("WaitGreeting() error = %v", err)
	}
	cmd := c.Noop() // waits ServiceTime in its slot
	testkit.WaitFor(t, waitLong, "the NOOP to arrive", func() bool { return s.Stats().Commands == 1 })
	s.DropAll()
	if err := cmd.Wait(); err == nil {
		t.Error("Noop() succeeded after DropAll, want an error")
	}
}
