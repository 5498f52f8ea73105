package preflight_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/preflight"
)

// TestCheckDovecot: the mistakes against the real Dovecot of
// deploy/dovecot/start.sh, with its defaults (the greeting wait of 5 s
// included, and its auth_failure_delay of 2 s before a refused login).
func TestCheckDovecot(t *testing.T) {
	dc := testkit.DovecotFromEnv(t, 1)
	t.Parallel()
	user := dc.Prefix + "1"
	for _, tc := range []struct {
		name   string
		target preflight.Target
		want   error
		says   []string
	}{
		{name: "plain", target: preflight.Target{Addr: dc.Addr}},
		{name: "starttls", target: preflight.Target{Addr: dc.Addr, StartTLS: true, TLSConfig: dc.TLSConfig(t)}},
		{name: "tls", target: preflight.Target{Addr: dc.TLSAddr, TLS: true, TLSConfig: dc.TLSConfig(t)}},
		{name: "plain port under --tls", target: preflight.Target{Addr: dc.Addr, TLS: true, TLSConfig: dc.TLSConfig(t)},
			want: preflight.ErrPlainPort, says: []string{"drop --tls, or use --starttls"}},
		{name: "tls port without --tls", target: preflight.Target{Addr: dc.TLSAddr},
			want: preflight.ErrTLSPort, says: []string{"add --tls"}},
		{name: "untrusted certificate", target: preflight.Target{Addr: dc.TLSAddr, TLS: true},
			want: preflight.ErrUntrusted, says: []string{"--tls-ca FILE"}},
		{name: "wrong password", target: preflight.Target{Addr: dc.Addr, Password: "Wr0ng-" + dc.Password, LocalAddr: freshLoopback()},
			want: preflight.ErrLoginRefused, says: []string{`"` + user + `"`, "AUTHENTICATIONFAILED", "check the password"}},
		{name: "closed port", target: preflight.Target{Addr: testkit.ClosedAddr(t)},
			want: preflight.ErrClosedPort, says: []string{"connection refused", "is the server running"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tg := tc.target
			tg.User = user
			if tg.Password == "" {
				tg.Password = dc.Password
			}
			err := preflight.Check(t.Context(), tg)
			checkError(t, err, tc.want, tc.says...)
			if err != nil && strings.Contains(err.Error(), tg.Password) {
				t.Errorf("Check() error = %q shows the password", err)
			}
		})
	}
}

// freshLoopback is a loopback source address of its own: Dovecot 2.3 keeps
// an auth penalty per source IP after a failed login, which would delay
// every other test's logins from 127.0.0.1 (see producer's
// wrongPasswordOptions).
func freshLoopback() string {
	return fmt.Sprintf("127.%d.%d.%d", 1+rand.IntN(254), rand.IntN(256), 1+rand.IntN(254))
}
