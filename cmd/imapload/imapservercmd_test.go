package main

import (
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// TestIMAPServerCommand runs `imapload imapserver --users 100` in-process and
// drives a full LOGIN/LIST/SELECT/FETCH/STORE/APPEND/LOGOUT session against
// it with go-imap's client; the command returns nil when its context ends.
func TestIMAPServerCommand(t *testing.T) {
	srv := startCLI(t, "imapserver", "imapserver", "--users", "100", "--listen", "127.0.0.1:0")
	addr := srv.waitMatch(t, imapAddrRe, 15*time.Second)
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("imapserver listens on %s, want 127.0.0.1", addr)
	}
	c, err := imapclient.DialInsecure(addr, nil)
	if err != nil {
		t.Fatalf("DialInsecure(%s): %v", addr, err)
	}
	defer c.Close()
	if err := c.Login("user101", "secret").Wait(); err == nil {
		t.Errorf("Login(user101) = nil, want a failure: --users 100 seeds user1..user100")
	}
	if err := c.Login("user100", "secret").Wait(); err != nil {
		t.Fatalf("Login(user100) = %v", err)
	}
	imapSession(t, c)
	if err := c.Logout().Wait(); err != nil {
		t.Errorf("Logout() = %v", err)
	}
	if err := srv.stop(t, 10*time.Second); err != nil {
		t.Errorf("imapserver returned %v after its context ended, want nil", err)
	}
}

// imapSession runs LIST, SELECT, FETCH, STORE and APPEND on a logged-in client.
func imapSession(t *testing.T, c *imapclient.Client) {
	t.Helper()
	boxes, err := c.List("", "*", nil).Collect()
	if err != nil || !hasMailbox(boxes, "INBOX") {
		t.Fatalf("List() = %v, %v; want INBOX", boxes, err)
	}
	sel, err := c.Select("INBOX", nil).Wait()
	if err != nil || sel.NumMessages == 0 {
		t.Fatalf("Select(INBOX) = %+v, %v; want seeded messages", sel, err)
	}
	uid := fetchOne(t, c, imap.SeqSetNum(1))
	flags := &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagFlagged}}
	if err := c.Store(imap.UIDSetNum(uid), flags, nil).Close(); err != nil {
		t.Fatalf("Store(+FLAGS \\Flagged) = %v", err)
	}
	if got := fetchFlags(t, c, uid); !hasFlag(got, imap.FlagFlagged) {
		t.Errorf("flags after Store = %v, want \\Flagged", got)
	}
	raw := "From: a@example.org\r\nTo: b@example.org\r\nSubject: cmd test\r\n\r\nhello\r\n"
	a := c.Append("INBOX", int64(len(raw)), nil)
	if _, err := a.Write([]byte(raw)); err != nil {
		t.Fatalf("Append write: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("Append close: %v", err)
	}
	if ad, err := a.Wait(); err != nil || ad.UID == 0 {
		t.Fatalf("Append() = %+v, %v; want a UID", ad, err)
	}
	again, err := c.Select("INBOX", nil).Wait()
	if err != nil || again.NumMessages != sel.NumMessages+1 {
		t.Errorf("Select after Append: %d messages (%v), want %d", again.NumMessages, err, sel.NumMessages+1)
	}
}

// fetchOne fetches a message's envelope and body and returns its UID.
func fetchOne(t *testing.T, c *imapclient.Client, set imap.NumSet) imap.UID {
	t.Helper()
	opts := &imap.FetchOptions{UID: true, Envelope: true, BodySection: []*imap.FetchItemBodySection{{Peek: true}}}
	msgs, err := c.Fetch(set, opts).Collect()
	if err != nil || len(msgs) != 1 {
		t.Fatalf("Fetch(%v) = %d messages, %v; want 1", set, len(msgs), err)
	}
	m := msgs[0]
	if m.Envelope == nil || len(m.BodySection) == 0 || m.UID == 0 {
		t.Fatalf("Fetch(%v) = %+v, want envelope, body and UID", set, m)
	}
	return m.UID
}

func fetchFlags(t *testing.T, c *imapclient.Client, uid imap.UID) []imap.Flag {
	t.Helper()
	msgs, err := c.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{Flags: true}).Collect()
	if err != nil || len(msgs) != 1 {
		t.Fatalf("Fetch(UID %d, FLAGS) = %d messages, %v; want 1", uid, len(msgs), err)
	}
	return msgs[0].Flags
}

func hasMailbox(boxes []*imap.ListData, name string) bool {
	for _, b := range boxes {
		if b.Mailbox == name {
			return true
		}
	}
	return false
}

func hasFlag(flags []imap.Flag, f imap.Flag) bool {
	for _, g := range flags {
		if g == f {
			return true
		}
	}
	return false
}
