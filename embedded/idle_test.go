package embedded_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/imapload/imapload/embedded"
)

// TestIMAPIdlePush: a session in IDLE (RFC 2177) is told of every message
// another connection appends right after its "+ idling", the moment at
// which imapmemserver alone has not yet registered for updates.
func TestIMAPIdlePush(t *testing.T) {
	s := startIMAP(t, nil)
	idler, exists := inboxWatcher(t, s, s.UserName(1), 64)
	pusher := login(t, s, s.UserName(1))
	for i := range 50 {
		idle, err := idler.Idle()
		if err != nil {
			t.Fatalf("round %d: Idle() error = %v", i, err)
		}
		appendMsg(t, pusher, fmt.Appendf(nil, "Subject: push %d\r\n\r\nbody\r\n", i))
		select {
		case n := <-exists:
			if want := uint32(5 + i + 1); n != want {
				t.Errorf("round %d: EXISTS %d, want %d", i, n, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("round %d: no EXISTS within 5 s of the APPEND", i)
		}
		if err := idle.Close(); err != nil {
			t.Fatalf("round %d: IDLE Close() error = %v", i, err)
		}
		if err := idle.Wait(); err != nil {
			t.Fatalf("round %d: IDLE Wait() error = %v", i, err)
		}
	}
}

// inboxWatcher logs user in on a connection of its own and selects INBOX;
// every message count the server announces (EXISTS) is sent on the channel
// (buffered n).
func inboxWatcher(t *testing.T, s *embedded.IMAP, user string, n int) (*imapclient.Client, <-chan uint32) {
	t.Helper()
	exists := make(chan uint32, n)
	c, err := imapclient.DialInsecure(s.Addr(), &imapclient.Options{UnilateralDataHandler: &imapclient.UnilateralDataHandler{
		Mailbox: func(d *imapclient.UnilateralDataMailbox) {
			if d.NumMessages != nil {
				exists <- *d.NumMessages
			}
		},
	}})
	if err != nil {
		t.Fatalf("DialInsecure() error = %v", err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Login(user, s.Password()).Wait(); err != nil {
		t.Fatalf("Login() error = %v", err)
	}
	if _, err := c.Select("INBOX", nil).Wait(); err != nil {
		t.Fatalf("Select(INBOX) error = %v", err)
	}
	return c, exists
}
