package producer

import (
	"bufio"
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/messages"
)

// TestHeldConnectionLifecycle sets a held connection up with each login
// method and transport, idles, re-IDLEs and logs out, against the embedded
// server: one successful set-up is recorded as phase hold, nothing as dial
// or login.
func TestHeldConnectionLifecycle(t *testing.T) {
	tests := []struct {
		name          string
		auth          string
		tls, startTLS bool
	}{
		{name: "LOGIN", auth: AuthLogin},
		{name: "AUTHENTICATE PLAIN", auth: AuthPlain},
		{name: "implicit TLS", auth: AuthLogin, tls: true},
		{name: "STARTTLS, AUTHENTICATE PLAIN", auth: AuthPlain, startTLS: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startTestIMAP(t, &embedded.IMAPOptions{TLS: tt.tls, StartTLS: tt.startTLS})
			env := newTestEnv(t, srv, func(o *Options) {
				o.Auth, o.TLS, o.StartTLS = tt.auth, tt.tls, tt.startTLS
				if tt.tls || tt.startTLS {
					o.TLSConfig = srv.TLSConfig()
				}
			})
			h := newHolder(env, 1, 1)
			ctx := context.Background()
			c, err := h.setup(ctx, env.cfg.Accounts[0])
			if err != nil {
				t.Fatalf("holder.setup() error = %v", err)
			}
			if err := c.wait(ctx, time.Now().Add(50*time.Millisecond)); err != nil {
				t.Fatalf("idleConn.wait() error = %v, want nil at the deadline", err)
			}
			if err := c.reidle(time.Second); err != nil {
				t.Fatalf("idleConn.reidle() error = %v", err)
			}
			c.logout(time.Second)
			b := cutPhases(t, env)
			if ph := b.PhaseStats(messages.Hold); ph == nil || ph.Succeeded != 1 || ph.Attempted != 1 {
				t.Errorf("phase hold = %+v, want 1 attempted and succeeded", ph)
			}
			if b.PhaseStats(messages.Dial) != nil || b.PhaseStats(messages.Login) != nil {
				t.Errorf("phases dial/login recorded for a held connection: %v", b.Phases)
			}
		})
	}
}

// TestHeldConnectionRefused: a wrong password fails the set-up in phase
// hold with the server's answer as its kind, never the password.
func TestHeldConnectionRefused(t *testing.T) {
	srv := startTestIMAP(t, nil)
	env := newTestEnv(t, srv, nil)
	h := newHolder(env, 1, 1)
	bad := Account{User: env.cfg.Accounts[0].User, Password: `wr"ong\pass`}
	env.rec = newTestEnv(t, srv, func(o *Options) { o.Accounts = []Account{bad} }).rec
	if _, err := h.setup(context.Background(), bad); err == nil || !strings.HasPrefix(err.Error(), "LOGIN: NO") {
		t.Fatalf("holder.setup(wrong password) error = %v, want LOGIN: NO …", err)
	}
	ph := cutPhases(t, env).PhaseStats(messages.Hold)
	if ph == nil || ph.Attempted != 1 || ph.Succeeded != 0 || len(ph.Errors) != 1 {
		t.Fatalf("phase hold = %+v, want one failure", ph)
	}
	if e := ph.Errors[0]; !strings.HasPrefix(e.Kind, "LOGIN: NO") || strings.Contains(e.Example, "ong") {
		t.Errorf("error kind %q, example %q: want LOGIN: NO …, no password", e.Kind, e.Example)
	}
}

// TestHeldConnectionWake: a wait returns at once when the step ends.
func TestHeldConnectionWake(t *testing.T) {
	srv := startTestIMAP(t, nil)
	env := newTestEnv(t, srv, nil)
	c, err := newHolder(env, 1, 1).setup(context.Background(), env.cfg.Accounts[0])
	if err != nil {
		t.Fatalf("holder.setup() error = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, c.wake)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- c.wait(ctx, time.Now().Add(time.Hour)) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("idleConn.wait() after cancel = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("idleConn.wait() did not return within 10 s of cancel")
	}
	c.logout(time.Second)
}

func TestLiteralSize(t *testing.T) {
	for in, want := range map[string]int{
		"* 1 FETCH (BODY[] {12}\r\n": 12, "* 1 FETCH (X {3+}\r\n": 3, "* OK done\r\n": -1,
		"{}\r\n": -1, "* x {-1}\r\n": -1, "* x {99999999999}\r\n": -1,
	} {
		if got := literalSize([]byte(in)); got != want {
			t.Errorf("literalSize(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestQuoted(t *testing.T) {
	if got, ok := quoted(`a"b\c`); !ok || got != `"a\"b\\c"` {
		t.Errorf("quoted(a\"b\\c) = %s, %v", got, ok)
	}
	if _, ok := quoted("a\r\nb"); ok {
		t.Error("quoted(CRLF) ok, want refused")
	}
}

// TestIdleConnLine reads responses longer than the line buffer and
// responses holding literals as one line each, from its start.
func TestIdleConnLine(t *testing.T) {
	in := "* CAPABILITY " + strings.Repeat("X ", 20) + "\r\n" +
		"* 1 FETCH (BODY[] {5}\r\nab\r\nc FLAGS ())\r\n" +
		"\r\n" +
		"h1 OK done\r\n"
	c := &idleConn{br: bufio.NewReaderSize(strings.NewReader(in), 16)}
	for _, want := range []string{"* CAPABILITY X X", "* 1 FETCH (BODY[", "h1 OK done"} {
		line, err := c.line()
		if err != nil || !strings.HasPrefix(string(line), want) {
			t.Fatalf("idleConn.line() = %q, %v; want %q…", line, err, want)
		}
	}
	if _, err := c.line(); err == nil {
		t.Error("idleConn.line() at EOF: nil error")
	}
}

// TestHeldConnectionOutOfFiles: a dial this process cannot make for want of
// file descriptors is the generator's failure, never the server's.
func TestHeldConnectionOutOfFiles(t *testing.T) {
	srv := startTestIMAP(t, nil)
	env := newTestEnv(t, srv, nil)
	h := newHolder(env, 1, 1)
	h.dialer.Control = func(string, string, syscall.RawConn) error { return syscall.EMFILE }
	_, err := h.setup(context.Background(), env.cfg.Accounts[0])
	if err == nil || !strings.HasPrefix(err.Error(), messages.GeneratorKind) {
		t.Fatalf("holder.setup(out of files) error = %v, want one starting %q", err, messages.GeneratorKind)
	}
}
