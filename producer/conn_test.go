package producer

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// stallingServer is a scripted IMAP server on loopback for one connection:
// it logs in and selects normally, then answers FETCH with the start of a
// message literal and stops sending, as a server that hangs mid-response.
// closed is closed when the client has closed the connection.
func stallingServer(t *testing.T) (addr string, closed <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		r := bufio.NewReader(conn)
		io.WriteString(conn, "* OK [CAPABILITY IMAP4rev1] stalling server ready\r\n")
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return // the client closed the connection
			}
			tag, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
			verb, _, _ := strings.Cut(rest, " ")
			switch strings.ToUpper(verb) {
			case "SELECT":
				io.WriteString(conn, "* 2 EXISTS\r\n* FLAGS (\\Seen)\r\n* OK [UIDVALIDITY 1] ok\r\n"+tag+" OK [READ-WRITE] done\r\n")
			case "FETCH", "UID":
				io.WriteString(conn, "* 1 FETCH (UID 1 FLAGS () RFC822.SIZE 100 BODY[] {100}\r\nSubject: hel")
			case "CAPABILITY":
				io.WriteString(conn, "* CAPABILITY IMAP4rev1\r\n"+tag+" OK done\r\n")
			default:
				io.WriteString(conn, tag+" OK done\r\n")
			}
		}
	}()
	return ln.Addr().String(), done
}

// TestSessionTimeoutMidLiteral: go-imap's read deadlines are switched off
// (guardedConn), so a server that stops in the middle of a FETCH literal
// must be cut off by the session's own timeout: the FETCH fails as
// "timeout", the session disconnects, and the connection is closed.
func TestSessionTimeoutMidLiteral(t *testing.T) {
	addr, closed := stallingServer(t)
	accts, err := TemplateAccounts("user%d", 1, "pw")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := (&Options{ID: "p1", Addr: addr, Accounts: accts, OpTimeout: 200 * time.Millisecond}).config()
	if err != nil {
		t.Fatal(err)
	}
	tl := timeline{start: time.Now().Add(-time.Millisecond), duration: time.Hour}
	env := newSessionEnv(cfg, tl, recorder.New("r1", 1, cfg.ID, messages.StepInfo{}, &recorder.Options{Seed: 1}), cfg.Logger, 1)
	s := newSession(env, 0, 1)
	if err := s.connect(context.Background()); err != nil {
		t.Fatalf("session.connect() error = %v", err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		s.serve(job{phase: messages.Fetch, intended: time.Now()})
	}()
	select {
	case <-served:
	case <-time.After(30 * time.Second): // a hang, not a timing bar: the guard fires after 200 ms
		t.Fatal("FETCH against a stalled server did not return")
	}
	if s.c != nil || env.open.Load() != 0 {
		t.Errorf("after a stalled FETCH: client %v, open sessions %d; want disconnected", s.c, env.open.Load())
	}
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("the server never saw the connection close")
	}
	ps := cutPhases(t, env).PhaseStats(messages.Fetch)
	if ps == nil || ps.Attempted != 1 || len(ps.Errors) != 1 || ps.Errors[0].Kind != "timeout" {
		t.Errorf("fetch stats = %+v, want one attempt failed as \"timeout\"", ps)
	}
}
