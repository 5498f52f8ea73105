package embedded_test

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/internal/testkit"
)

func startIMAP(t *testing.T, opts *embedded.IMAPOptions) *embedded.IMAP {
	t.Helper()
	s, err := embedded.StartIMAP(opts)
	if err != nil {
		t.Fatalf("StartIMAP() error = %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close() error = %v", err)
		}
	})
	return s
}

// dial connects a plain-text client that is closed at the end of the test.
func dial(t *testing.T, s *embedded.IMAP) *imapclient.Client {
	t.Helper()
	c, err := imapclient.DialInsecure(s.Addr(), nil)
	if err != nil {
		t.Fatalf("DialInsecure() error = %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// login dials and logs in as user with the server's password.
func login(t *testing.T, s *embedded.IMAP, user string) *imapclient.Client {
	t.Helper()
	c := dial(t, s)
	if err := c.Login(user, s.Password()).Wait(); err != nil {
		t.Fatalf("Login(%q) error = %v", user, err)
	}
	return c
}

func TestIMAPFullSession(t *testing.T) {
	s := startIMAP(t, &embedded.IMAPOptions{Users: 100})
	c := login(t, s, embedded.UserName(42))

	boxes, err := c.List("", "*", nil).Collect()
	if err != nil || len(boxes) != 1 || boxes[0].Mailbox != "INBOX" {
		t.Fatalf("List() = %v, %v; want [INBOX]", boxes, err)
	}
	sel, err := c.Select("INBOX", nil).Wait()
	if err != nil || sel.NumMessages != 5 {
		t.Fatalf("Select(INBOX) = %+v, %v; want 5 messages", sel, err)
	}
	msgs, err := c.Fetch(imap.SeqSetNum(1), &imap.FetchOptions{UID: true, Flags: true, Envelope: true,
		BodySection: []*imap.FetchItemBodySection{{Peek: true}}}).Collect()
	if err != nil || len(msgs) != 1 {
		t.Fatalf("Fetch(1) = %d messages, %v; want 1", len(msgs), err)
	}
	if got := msgs[0].Envelope.Subject; got != "seed message 1" {
		t.Errorf("Fetch(1) subject = %q, want %q", got, "seed message 1")
	}
	if body := msgs[0].FindBodySection(&imap.FetchItemBodySection{}); !bytes.Equal(body, embedded.SeedMessage("user42", 1)) {
		t.Errorf("Fetch(1) body = %q, want the seed message", body)
	}
	store := &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagSeen}}
	if err := c.Store(imap.UIDSetNum(msgs[0].UID), store, nil).Close(); err != nil {
		t.Fatalf("Store(+\\Seen) error = %v", err)
	}
	raw := []byte("From: a@example.org\r\nSubject: appended\r\n\r\nbody {with braces}\r\n")
	uid := appendMsg(t, c, raw)
	got, err := c.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{UID: true, Flags: true,
		BodySection: []*imap.FetchItemBodySection{{Peek: true}}}).Collect()
	if err != nil || len(got) != 1 {
		t.Fatalf("Fetch(uid %d) = %d messages, %v; want 1", uid, len(got), err)
	}
	if body := got[0].FindBodySection(&imap.FetchItemBodySection{}); !bytes.Equal(body, raw) {
		t.Errorf("Fetch(uid %d) body = %q, want %q", uid, body, raw)
	}
	if err := c.Logout().Wait(); err != nil {
		t.Errorf("Logout() error = %v", err)
	}

	checkCounted(t, s, "LOGIN", "LIST", "SELECT", "FETCH", "UID STORE", "APPEND", "UID FETCH", "LOGOUT")
	if st := s.Stats(); st.LoginsOK != 1 || st.Connections != 1 {
		t.Errorf("Stats() logins %d, connections %d; want 1, 1", st.LoginsOK, st.Connections)
	}
}

// checkCounted fails unless every named command was counted.
func checkCounted(t *testing.T, s *embedded.IMAP, names ...string) {
	t.Helper()
	st := s.Stats()
	for _, name := range names {
		if st.CommandsByName[name] == 0 {
			t.Errorf("Stats().CommandsByName[%q] = 0, want > 0 (all: %v)", name, st.CommandsByName)
		}
	}
}

// appendMsg appends raw to INBOX and returns its UID.
func appendMsg(t *testing.T, c *imapclient.Client, raw []byte) imap.UID {
	t.Helper()
	a := c.Append("INBOX", int64(len(raw)), nil)
	if _, err := a.Write(raw); err != nil {
		t.Fatalf("Append().Write() error = %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("Append().Close() error = %v", err)
	}
	data, err := a.Wait()
	if err != nil {
		t.Fatalf("Append().Wait() error = %v", err)
	}
	return data.UID
}

func TestStartIMAPOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    *embedded.IMAPOptions
		last    int // number of the last seeded user
		user    string
		wantErr error
	}{
		{name: "nil means defaults", opts: nil, last: 10, user: "user10"},
		{name: "user format", opts: &embedded.IMAPOptions{Users: 3, UserFormat: "lt-%d@example.org"}, last: 3, user: "lt-3@example.org"},
		{name: "negative users", opts: &embedded.IMAPOptions{Users: -1}, wantErr: embedded.ErrBadOption},
		{name: "padded format", opts: &embedded.IMAPOptions{Users: 2, UserFormat: "lt%04d"}, last: 2, user: "lt0002"},
		{name: "format without a number", opts: &embedded.IMAPOptions{UserFormat: "user"}, wantErr: embedded.ErrBadOption},
		{name: "format with a string verb", opts: &embedded.IMAPOptions{UserFormat: "user%s"}, wantErr: embedded.ErrBadOption},
		{name: "fraction above 1", opts: &embedded.IMAPOptions{NoFraction: 1.5}, wantErr: embedded.ErrBadOption},
		{name: "NaN fraction", opts: &embedded.IMAPOptions{SlowFraction: math.NaN()}, wantErr: embedded.ErrBadOption},
		{name: "bcrypt cost too high", opts: &embedded.IMAPOptions{BcryptCost: 32}, wantErr: embedded.ErrBadOption},
		{name: "negative wear", opts: &embedded.IMAPOptions{DegradeFor: -time.Second}, wantErr: embedded.ErrBadOption},
		{name: "wear share above 1", opts: &embedded.IMAPOptions{DegradeShare: 1.5}, wantErr: embedded.ErrBadOption},
		{name: "NaN wear share", opts: &embedded.IMAPOptions{DegradeShare: math.NaN()}, wantErr: embedded.ErrBadOption},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := embedded.StartIMAP(tt.opts)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("StartIMAP() error = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			defer s.Close()
			if got := s.UserName(tt.last); got != tt.user {
				t.Errorf("UserName(last) = %q, want %q", got, tt.user)
			}
			c, err := imapclient.DialInsecure(s.Addr(), nil)
			if err != nil {
				t.Fatalf("DialInsecure() error = %v", err)
			}
			defer c.Close()
			if err := c.Login(tt.user, "secret").Wait(); err != nil {
				t.Errorf("Login(%q) error = %v", tt.user, err)
			}
		})
	}
}

func TestIMAPClose(t *testing.T) {
	s, err := embedded.StartIMAP(nil)
	if err != nil {
		t.Fatalf("StartIMAP() error = %v", err)
	}
	c, err := imapclient.DialInsecure(s.Addr(), nil)
	if err != nil {
		t.Fatalf("DialInsecure() error = %v", err)
	}
	defer c.Close()
	if err := c.Login("user1", "secret").Wait(); err != nil {
		t.Fatalf("Login() error = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close() error = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close() error = %v", err)
	}
	if err := c.Noop().Wait(); err == nil {
		t.Error("Noop() after server Close succeeded, want an error")
	}
	if st := s.Stats(); st.Active != 0 || len(s.Sessions()) != 0 {
		t.Errorf("after Close: Stats().Active = %d, Sessions() = %v; want 0, none", st.Active, s.Sessions())
	}
	if conn, err := net.DialTimeout("tcp", s.Addr(), time.Second); err == nil {
		conn.Close()
		t.Error("dial after Close succeeded, want connection refused")
	}
}

func TestIMAPCountsEveryCommand(t *testing.T) {
	s := startIMAP(t, nil)
	c := dial(t, s)
	if _, err := c.Capability().Wait(); err != nil {
		t.Fatalf("Capability() error = %v", err)
	}
	if err := c.Noop().Wait(); err != nil {
		t.Fatalf("Noop() error = %v", err)
	}
	if err := c.Login("user1", "wrong").Wait(); err == nil {
		t.Fatal("Login(wrong password) succeeded")
	}
	if err := c.Login("user1", "secret").Wait(); err != nil {
		t.Fatalf("Login() error = %v", err)
	}
	if err := c.Logout().Wait(); err != nil {
		t.Fatalf("Logout() error = %v", err)
	}
	st := s.Stats()
	want := map[string]uint64{"CAPABILITY": 1, "NOOP": 1, "LOGIN": 2, "LOGOUT": 1}
	for name, n := range want {
		if st.CommandsByName[name] != n {
			t.Errorf("Stats().CommandsByName[%q] = %d, want %d", name, st.CommandsByName[name], n)
		}
	}
	if st.Commands != 5 || st.LoginsOK != 1 || st.LoginsFailed != 1 {
		t.Errorf("Stats() commands %d, ok %d, failed %d; want 5, 1, 1", st.Commands, st.LoginsOK, st.LoginsFailed)
	}
	names := slices.Sorted(maps.Keys(st.CommandsByName))
	if fmt.Sprint(names) != "[CAPABILITY LOGIN LOGOUT NOOP]" {
		t.Errorf("Stats().CommandsByName keys = %v", names)
	}
}

func TestIMAPCloseUnblocksQueuedCommand(t *testing.T) {
	s, err := embedded.StartIMAP(&embedded.IMAPOptions{Workers: 1, ServiceTime: time.Minute})
	if err != nil {
		t.Fatalf("StartIMAP() error = %v", err)
	}
	c, err := imapclient.DialInsecure(s.Addr(), nil)
	if err != nil {
		t.Fatalf("DialInsecure() error = %v", err)
	}
	defer c.Close()
	cmd := c.Noop() // holds the only slot for a minute
	testkit.WaitFor(t, waitLong, "the NOOP to arrive", func() bool { return s.Stats().Commands == 1 })
	if err := s.Close(); err != nil { // that it does not wait is TestIMAPCloseDoesNotWaitForService's
		t.Fatalf("Close() error = %v", err)
	}
	if err := cmd.Wait(); err == nil {
		t.Error("Noop() succeeded after Close, want an error")
	}
}
