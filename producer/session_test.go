package producer

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// These tests drive single sessions against the embedded IMAP server, the
// way a benchmark can: newTestEnv (a step environment whose window is always
// open), newSession, connect (dial, LOGIN, SELECT), serve or command (one
// scheduled command), farewell (LOGOUT), and env.rec.Cut for the samples.

func startTestIMAP(t testing.TB, opts *embedded.IMAPOptions) *embedded.IMAP {
	t.Helper()
	srv, err := embedded.StartIMAP(opts)
	if err != nil {
		t.Fatalf("embedded.StartIMAP() error = %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// newTestEnv returns a session environment whose measurement window is open
// for the next hour, so that everything is recorded.
func newTestEnv(t testing.TB, srv *embedded.IMAP, edit func(*Options)) *sessionEnv {
	t.Helper()
	accts, err := TemplateAccounts("user%d", 10, srv.Password())
	if err != nil {
		t.Fatalf("TemplateAccounts() error = %v", err)
	}
	o := &Options{ID: "p1", Addr: srv.Addr(), Accounts: accts, OpTimeout: 2 * time.Second}
	if edit != nil {
		edit(o)
	}
	cfg, err := o.config()
	if err != nil {
		t.Fatalf("config() error = %v", err)
	}
	tl := timeline{start: time.Now().Add(-time.Millisecond), duration: time.Hour}
	rec := recorder.New("r1", 1, cfg.ID, messages.StepInfo{}, &recorder.Options{Seed: 1, Secrets: cfg.secrets})
	return newSessionEnv(cfg, tl, rec, cfg.Logger, 1)
}

// cutPhases returns the recorded batch, checked against the contract.
func cutPhases(t testing.TB, env *sessionEnv) *messages.SampleBatch {
	t.Helper()
	b := env.rec.Cut(0, time.Second, true, messages.Health{})
	if _, err := messages.EncodeBatch(b); err != nil {
		t.Fatalf("EncodeBatch(recorded batch) error = %v", err)
	}
	return b
}

func connected(t testing.TB, env *sessionEnv) *session {
	t.Helper()
	s := newSession(env, 0, 1)
	if err := s.connect(context.Background()); err != nil {
		t.Fatalf("session.connect() error = %v", err)
	}
	t.Cleanup(s.farewell)
	return s
}

func TestSessionServesEveryCommand(t *testing.T) {
	srv := startTestIMAP(t, nil)
	env := newTestEnv(t, srv, nil)
	s := connected(t, env)
	for _, p := range []messages.Phase{messages.List, messages.Select, messages.Fetch, messages.Store,
		messages.Fetch, messages.Append, messages.Logout} {
		s.serve(job{phase: p, intended: time.Now()})
	}
	if s.c != nil || env.open.Load() != 0 {
		t.Errorf("after LOGOUT: client %v, open sessions %d; want disconnected", s.c, env.open.Load())
	}
	if err := s.connect(context.Background()); err != nil {
		t.Fatalf("session.connect() after LOGOUT error = %v", err)
	}
	b := cutPhases(t, env)
	want := map[messages.Phase]uint64{messages.Dial: 2, messages.Login: 2, messages.Select: 3, messages.List: 1,
		messages.Fetch: 2, messages.Store: 1, messages.Append: 1, messages.Logout: 1}
	for p, n := range want {
		ps := b.PhaseStats(p)
		if ps == nil || ps.Attempted < n || ps.Succeeded != ps.Attempted {
			t.Errorf("phase %v stats = %+v, want ≥ %d attempted, all succeeded", p, ps, n)
		}
	}
	if b.Scheduled != 7 || b.Completed != 7 {
		t.Errorf("batch scheduled/completed = %d/%d, want 7/7", b.Scheduled, b.Completed)
	}
}

func TestSessionVerifiesAppends(t *testing.T) {
	srv := startTestIMAP(t, nil)
	env := newTestEnv(t, srv, nil)
	s := connected(t, env)
	out, err := s.command(messages.Append)
	uid, raw := out.uid, out.raw
	if err != nil || uid == 0 {
		t.Fatalf("session.command(Append) = uid %d, error %v; want a UID from APPENDUID", uid, err)
	}
	j := job{phase: messages.Append, intended: time.Now()}
	s.verify(j, uid, raw)
	tampered := append([]byte(nil), raw...)
	tampered[len(tampered)-3] ^= 1
	s.verify(j, uid, tampered)
	s.verify(j, uid+1000, raw) // never appended
	ps := cutPhases(t, env).PhaseStats(messages.Fetch)
	if ps == nil || ps.Attempted != 3 || ps.Succeeded != 1 {
		t.Fatalf("fetch stats = %+v, want 3 attempted, 1 succeeded", ps)
	}
	if len(ps.Errors) != 1 || ps.Errors[0].Kind != "integrity" || ps.Errors[0].Count != 2 {
		t.Errorf("fetch errors = %+v, want 2 of kind \"integrity\"", ps.Errors)
	}
}

func TestSessionTimeout(t *testing.T) {
	srv := startTestIMAP(t, &embedded.IMAPOptions{ServiceTime: 500 * time.Millisecond})
	env := newTestEnv(t, srv, func(o *Options) { o.OpTimeout = 50 * time.Millisecond })
	s := newSession(env, 0, 1)
	err := s.connect(context.Background())
	if err != errTimeout {
		t.Fatalf("session.connect() error = %v, want errTimeout", err)
	}
	if s.c != nil || env.open.Load() != 0 {
		t.Errorf("after a timeout: client %v, open sessions %d; want disconnected", s.c, env.open.Load())
	}
	ps := cutPhases(t, env).PhaseStats(messages.Login)
	if ps == nil || len(ps.Errors) != 1 || ps.Errors[0].Kind != "timeout" {
		t.Errorf("login stats = %+v, want one error of kind \"timeout\"", ps)
	}
}

func TestSessionWrongPassword(t *testing.T) {
	srv := startTestIMAP(t, nil)
	env := newTestEnv(t, srv, func(o *Options) {
		o.Accounts = []Account{{User: "user1", Password: "wrong-password"}}
	})
	s := newSession(env, 0, 1)
	if err := s.connect(context.Background()); err == nil {
		t.Fatalf("session.connect() with a wrong password error = nil, want an error")
	}
	ps := cutPhases(t, env).PhaseStats(messages.Login)
	if ps == nil || len(ps.Errors) != 1 || !strings.Contains(ps.Errors[0].Kind, "AUTHENTICATIONFAILED") {
		t.Fatalf("login stats = %+v, want one AUTHENTICATIONFAILED error", ps)
	}
	if strings.Contains(ps.Errors[0].Example, "wrong-password") {
		t.Errorf("error example %q holds the password", ps.Errors[0].Example)
	}
}

func TestSessionTLS(t *testing.T) {
	srv := startTestIMAP(t, &embedded.IMAPOptions{TLS: true})
	env := newTestEnv(t, srv, func(o *Options) { o.TLS, o.TLSConfig = true, srv.TLSConfig() })
	s := connected(t, env)
	s.serve(job{phase: messages.Fetch, intended: time.Now()})
	b := cutPhases(t, env)
	dial := b.PhaseStats(messages.Dial)
	if dial == nil || dial.Succeeded != 1 || dial.TLS.Count != 1 {
		t.Errorf("dial stats = %+v, want 1 success with its TLS handshake timed apart", dial)
	}
	if b.Completed != 1 {
		t.Errorf("batch completed = %d, want 1 FETCH over TLS", b.Completed)
	}
}
