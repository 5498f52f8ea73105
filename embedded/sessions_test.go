package embedded_test

import (
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/internal/testkit"
)

// hookLog records OnConnect and OnLogin calls.
type hookLog struct {
	mu       sync.Mutex
	connects []string // remote addresses
	logins   []embedded.SessionInfo
}

func (h *hookLog) onConnect(remote net.Addr, _ time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.connects = append(h.connects, remote.String())
}

func (h *hookLog) onLogin(user string, remote net.Addr, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.logins = append(h.logins, embedded.SessionInfo{User: user, RemoteAddr: remote.String(), LoginAt: at})
}

// dialFrom connects a client and returns it with its local "ip:port".
func dialFrom(t *testing.T, s *embedded.IMAP) (*imapclient.Client, string) {
	t.Helper()
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatalf("net.Dial() error = %v", err)
	}
	c := imapclient.New(conn, nil)
	t.Cleanup(func() { c.Close() })
	return c, conn.LocalAddr().String()
}

func TestIMAPSessionsAndHooks(t *testing.T) {
	var hooks hookLog
	s := startIMAP(t, &embedded.IMAPOptions{OnConnect: hooks.onConnect, OnLogin: hooks.onLogin})
	before := time.Now()
	c1, addr1 := dialFrom(t, s)
	c2, addr2 := dialFrom(t, s)
	for _, c := range []*imapclient.Client{c1, c2} {
		if err := c.Login("user7", "secret").Wait(); err != nil {
			t.Fatalf("Login(user7) error = %v", err)
		}
	}
	got := s.Sessions()
	if len(got) != 2 {
		t.Fatalf("Sessions() = %v, want 2 sessions", got)
	}
	hooks.mu.Lock()
	logins, connects := hooks.logins, hooks.connects
	hooks.mu.Unlock()
	if len(logins) != 2 || len(connects) != 2 {
		t.Fatalf("hooks saw %d logins, %d connects; want 2, 2", len(logins), len(connects))
	}
	wantAddrs := map[string]bool{addr1: true, addr2: true}
	for i, info := range got {
		if info.User != "user7" || !wantAddrs[info.RemoteAddr] || info.LoginAt.Before(before) {
			t.Errorf("Sessions()[%d] = %+v, want user7 from %s or %s after %v", i, info, addr1, addr2, before)
		}
		if info != logins[0] && info != logins[1] {
			t.Errorf("Sessions()[%d] = %+v, not among OnLogin calls %+v", i, info, logins)
		}
		if !slices.Contains(connects, info.RemoteAddr) {
			t.Errorf("OnConnect calls %v miss %s", connects, info.RemoteAddr)
		}
	}
	if got[0].RemoteAddr == got[1].RemoteAddr {
		t.Errorf("Sessions() remote addresses both %s, want distinct", got[0].RemoteAddr)
	}
	if err := c1.Logout().Wait(); err != nil {
		t.Fatalf("Logout() error = %v", err)
	}
	testkit.WaitFor(t, waitLong, "one session left", func() bool {
		left := s.Sessions()
		return len(left) == 1 && left[0].RemoteAddr == addr2
	})
}
