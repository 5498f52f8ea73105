package preflight_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/preflight"
)

// password is the embedded servers' password in these tests; no error may
// show it.
const password = "pf-S3cret-pw"

func startIMAP(t *testing.T, o embedded.IMAPOptions) *embedded.IMAP {
	t.Helper()
	o.Users, o.Password = 2, password
	s, err := embedded.StartIMAP(&o)
	if err != nil {
		t.Fatalf("StartIMAP() error = %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// shortWait is the greeting wait of cases where no greeting can come (a
// TLS port dialled in clear text): a shorter test, the same outcome.
const shortWait = time.Second

// TestCheckEmbedded: every mistake against the embedded IMAP server is
// named with its fix, and the right flags pass.
func TestCheckEmbedded(t *testing.T) {
	t.Parallel()
	plain := startIMAP(t, embedded.IMAPOptions{})
	implicit := startIMAP(t, embedded.IMAPOptions{TLS: true})
	starttls := startIMAP(t, embedded.IMAPOptions{StartTLS: true})
	user := plain.UserName(1)
	wrongName := implicit.TLSConfig().Clone()
	wrongName.ServerName = "mail.example.org"
	for _, tc := range []struct {
		name   string
		target preflight.Target
		want   error    // nil: Check passes
		says   []string // what the error names, the fix among it
	}{
		{name: "plain", target: preflight.Target{Addr: plain.Addr()}},
		{name: "plain, auth plain", target: preflight.Target{Addr: plain.Addr(), Plain: true}},
		{name: "tls", target: preflight.Target{Addr: implicit.Addr(), TLS: true, TLSConfig: implicit.TLSConfig()}},
		{name: "starttls", target: preflight.Target{Addr: starttls.Addr(), StartTLS: true, TLSConfig: starttls.TLSConfig()}},
		{name: "plain port under --tls", target: preflight.Target{Addr: plain.Addr(), TLS: true},
			want: preflight.ErrPlainPort, says: []string{"speaks plain IMAP", "drop --tls, or use --starttls"}},
		{name: "tls port without --tls", target: preflight.Target{Addr: implicit.Addr(), GreetingWait: shortWait},
			want: preflight.ErrTLSPort, says: []string{"speaks TLS", "add --tls"}},
		{name: "tls port with --starttls", target: preflight.Target{Addr: implicit.Addr(), StartTLS: true, GreetingWait: shortWait},
			want: preflight.ErrTLSPort, says: []string{"use --tls instead of --starttls"}},
		{name: "untrusted certificate", target: preflight.Target{Addr: implicit.Addr(), TLS: true},
			want: preflight.ErrUntrusted, says: []string{"not trusted", "--tls-ca FILE"}},
		{name: "untrusted certificate, starttls", target: preflight.Target{Addr: starttls.Addr(), StartTLS: true},
			want: preflight.ErrUntrusted, says: []string{"--tls-ca FILE"}},
		{name: "certificate for another name", target: preflight.Target{Addr: implicit.Addr(), TLS: true, TLSConfig: wrongName},
			want: preflight.ErrUntrusted, says: []string{`not "mail.example.org"`, "127.0.0.1"}},
		{name: "starttls not offered", target: preflight.Target{Addr: plain.Addr(), StartTLS: true},
			want: preflight.ErrNoStartTLS, says: []string{"STARTTLS is not offered", "drop --starttls, or use --tls"}},
		{name: "wrong password", target: preflight.Target{Addr: plain.Addr(), Password: "Wr0ng-pw"},
			want: preflight.ErrLoginRefused, says: []string{"login was refused", `"` + user + `"`, "AUTHENTICATIONFAILED", "check the password"}},
		{name: "wrong password, auth plain", target: preflight.Target{Addr: plain.Addr(), Password: "Wr0ng-pw", Plain: true},
			want: preflight.ErrLoginRefused, says: []string{"AUTHENTICATE PLAIN", "check the password"}},
		{name: "both TLS modes", target: preflight.Target{Addr: plain.Addr(), TLS: true, StartTLS: true},
			want: preflight.ErrBadTarget, says: []string{"choose one"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tg := tc.target
			if tg.User == "" {
				tg.User = user
			}
			if tg.Password == "" {
				tg.Password = password
			}
			checkError(t, preflight.Check(t.Context(), tg), tc.want, tc.says...)
			if tc.want != nil && strings.Contains(preflight.Check(t.Context(), tg).Error(), tg.Password) {
				t.Error("the error shows the password")
			}
		})
	}
}

// checkError fails t unless err wraps want (nil: err is nil), names every
// one of says, and never shows a password.
func checkError(t *testing.T, err, want error, says ...string) {
	t.Helper()
	t.Logf("Check() error = %v", err)
	if want == nil {
		if err != nil {
			t.Fatalf("Check() error = %v, want nil", err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("Check() error = %v, want %v", err, want)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("Check() error = %q, want it to say %q", err, s)
		}
	}
	if strings.Contains(err.Error(), password) {
		t.Errorf("Check() error = %q shows the password", err)
	}
}

// TestCheckClosedPort: a port nothing listens on is named as such.
func TestCheckClosedPort(t *testing.T) {
	s := startIMAP(t, embedded.IMAPOptions{})
	addr := s.Addr()
	s.Close()
	err := preflight.Check(t.Context(), preflight.Target{Addr: addr, User: "user1", Password: password})
	checkError(t, err, preflight.ErrClosedPort, "connection refused", "is the server running", "port in --imap")
	if preflight.Mismatch(err) {
		t.Errorf("Mismatch(%v) = true, want false: nothing answered", err)
	}
}

// TestCheckCancelled: an ended context is reported as such, not as a
// mistake of the flags.
func TestCheckCancelled(t *testing.T) {
	s := startIMAP(t, embedded.IMAPOptions{TLS: true})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := preflight.Check(ctx, preflight.Target{Addr: s.Addr(), User: "user1", Password: password})
	if !errors.Is(err, context.Canceled) || preflight.Mismatch(err) {
		t.Errorf("Check(cancelled) error = %v, want context.Canceled, no mismatch", err)
	}
}

// TestMismatch: the errors of a server that answered otherwise than the
// flags said are mismatches; the others are not.
func TestMismatch(t *testing.T) {
	for _, err := range []error{preflight.ErrPlainPort, preflight.ErrTLSPort, preflight.ErrUntrusted,
		preflight.ErrNoStartTLS, preflight.ErrLoginRefused, preflight.ErrNotIMAP, preflight.ErrHandshake, preflight.ErrBadTarget} {
		if !preflight.Mismatch(err) {
			t.Errorf("Mismatch(%v) = false, want true", err)
		}
	}
	for _, err := range []error{nil, preflight.ErrClosedPort, preflight.ErrNoSuchHost, preflight.ErrUnreachable,
		preflight.ErrNoGreeting, preflight.ErrGreetedBye, preflight.ErrNoAnswer, context.Canceled} {
		if preflight.Mismatch(err) {
			t.Errorf("Mismatch(%v) = true, want false", err)
		}
	}
}
