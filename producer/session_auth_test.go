package producer

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/messages"
)

// TestSessionAuthMethods logs in by LOGIN and by AUTHENTICATE PLAIN, on a
// plain connection and after STARTTLS, against the embedded server.
func TestSessionAuthMethods(t *testing.T) {
	for _, tc := range []struct {
		name     string
		auth     string
		startTLS bool
		command  string // the login command the server counts (none after STARTTLS)
	}{
		{"LOGIN", AuthLogin, false, "LOGIN"},
		{"AUTHENTICATE PLAIN", AuthPlain, false, "AUTHENTICATE"},
		{"STARTTLS and LOGIN", AuthLogin, true, ""},
		{"STARTTLS and AUTHENTICATE PLAIN", AuthPlain, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startTestIMAP(t, &embedded.IMAPOptions{StartTLS: tc.startTLS})
			env := newTestEnv(t, srv, func(o *Options) {
				o.Auth, o.StartTLS, o.TLSConfig = tc.auth, tc.startTLS, srv.TLSConfig()
			})
			s := connected(t, env)
			s.serve(job{phase: messages.Fetch, intended: time.Now()})
			b := cutPhases(t, env)
			for _, p := range []messages.Phase{messages.Dial, messages.Login, messages.Select} {
				if ps := b.PhaseStats(p); ps == nil || ps.Succeeded != 1 || len(ps.Errors) != 0 {
					t.Errorf("%s: phase %v stats = %+v, want 1 success, no errors", tc.name, p, ps)
				}
			}
			if dial := b.PhaseStats(messages.Dial); tc.startTLS && (dial == nil || dial.TLS.Count != 1) {
				t.Errorf("%s: dial stats = %+v, want the STARTTLS handshake timed apart", tc.name, dial)
			}
			if b.Completed != 1 {
				t.Errorf("%s: batch completed = %d, want 1 FETCH", tc.name, b.Completed)
			}
			st := srv.Stats()
			if st.LoginsOK != 1 || (tc.command != "" && st.CommandsByName[tc.command] != 1) {
				t.Errorf("%s: server stats = %+v, want 1 login by %s", tc.name, st, tc.command)
			}
			if tc.startTLS && (st.CommandsByName["STARTTLS"] != 1 || st.CommandsByName["LOGIN"] != 0) {
				t.Errorf("%s: server commands = %v, want STARTTLS and no LOGIN seen in clear", tc.name, st.CommandsByName)
			}
		})
	}
}

// TestSessionStartTLSFails checks that a STARTTLS session never runs in
// clear: a server without STARTTLS, or with a certificate the client does
// not trust, fails the dial, and no login is attempted.
func TestSessionStartTLSFails(t *testing.T) {
	untrusted := &tls.Config{ServerName: "127.0.0.1", RootCAs: x509.NewCertPool()}
	for _, tc := range []struct {
		name     string
		startTLS bool // the server offers STARTTLS
		conf     func(*embedded.IMAP) *tls.Config
		kind     string // in the dial error's kind
	}{
		{"server without STARTTLS", false, func(*embedded.IMAP) *tls.Config { return nil }, "STARTTLS"},
		{"untrusted certificate", true, func(*embedded.IMAP) *tls.Config { return untrusted }, "x509"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startTestIMAP(t, &embedded.IMAPOptions{StartTLS: tc.startTLS})
			env := newTestEnv(t, srv, func(o *Options) { o.StartTLS, o.TLSConfig = true, tc.conf(srv) })
			s := newSession(env, 0, 1)
			if err := s.connect(context.Background()); err == nil {
				s.farewell()
				t.Fatalf("session.connect() error = nil, want the dial to fail")
			}
			b := cutPhases(t, env)
			dial := b.PhaseStats(messages.Dial)
			if dial == nil || len(dial.Errors) != 1 || !strings.Contains(strings.ToLower(dial.Errors[0].Kind+" "+dial.Errors[0].Example), strings.ToLower(tc.kind)) {
				t.Errorf("dial stats = %+v, want one error about %s", dial, tc.kind)
			}
			if ps := b.PhaseStats(messages.Login); ps != nil && ps.Attempted != 0 {
				t.Errorf("login stats = %+v, want no login attempted", ps)
			}
			if st := srv.Stats(); st.LoginsOK+st.LoginsFailed != 0 {
				t.Errorf("server stats = %+v, want no login", st)
			}
		})
	}
}

func TestOptionsAuth(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func(*Options)
		wantErr string
	}{
		{"default", func(*Options) {}, ""},
		{"plain", func(o *Options) { o.Auth = AuthPlain }, ""},
		{"STARTTLS", func(o *Options) { o.StartTLS = true }, ""},
		{"unknown method", func(o *Options) { o.Auth = "cram-md5" }, `Auth "cram-md5"`},
		{"TLS and STARTTLS", func(o *Options) { o.TLS, o.StartTLS = true, true }, "TLS and StartTLS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := validOptions()
			tc.edit(o)
			c, err := o.config()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("config() error = %v, want nil", err)
				}
				if c.Auth == "" {
					t.Errorf("config().Auth = %q, want a method", c.Auth)
				}
				if c.StartTLS && c.clientTLS() == nil {
					t.Errorf("config().clientTLS() = nil with StartTLS, want a configuration")
				}
				return
			}
			if !errors.Is(err, ErrBadOptions) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("config() error = %v, want ErrBadOptions naming %s", err, tc.wantErr)
			}
		})
	}
}
