package producer

import (
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/messages"
)

// clientPhases are the commands real clients send beside the default mix.
var clientPhases = []messages.Phase{messages.Status, messages.SearchDate, messages.SearchHeader, messages.Body,
	messages.Copy, messages.Move, messages.Expunge, messages.Noop, messages.Idle}

// TestSessionServesClientCommands sends each client command once on one
// session, after APPENDs that give MOVE and EXPUNGE messages of imapload's
// own, and a LIST that shows STATUS a folder: every one succeeds.
func TestSessionServesClientCommands(t *testing.T) {
	srv := startTestIMAP(t, nil)
	env := newTestEnv(t, srv, nil)
	s := connected(t, env)
	for _, p := range []messages.Phase{messages.Append, messages.Append, messages.Append, messages.Fetch} {
		s.serve(job{phase: p, intended: time.Now()})
	}
	for _, p := range append(clientPhases, messages.List, messages.Status, messages.Idle, messages.Body) {
		s.serve(job{phase: p, intended: time.Now()})
	}
	if s.pusher == nil || isClosed(s.pusher) {
		t.Errorf("after IDLE: pusher %v, want the second connection open and kept", s.pusher)
	}
	b := cutPhases(t, env)
	for _, p := range clientPhases {
		ps := b.PhaseStats(p)
		if ps == nil || ps.Attempted == 0 || ps.Succeeded != ps.Attempted {
			t.Errorf("phase %v stats = %+v, want ≥ 1 attempted, all succeeded", p, ps)
			continue
		}
		t.Logf("%-13v %d succeeded, service times %v µs", p, ps.Succeeded, ps.Service.Values)
	}
	if !s.ownReady || len(s.folders) == 0 || s.folders[0] != ownMailbox {
		t.Errorf("after COPY and LIST: own mailbox ready %v, folders %q; want %q created and listed", s.ownReady, s.folders, ownMailbox)
	}
	s.farewell()
	if s.pusher != nil {
		t.Errorf("after farewell: pusher %v, want closed with the session", s.pusher)
	}
}

// TestSessionNothingToAddress: on an empty INBOX, COPY, body FETCH and
// FETCH are not sent and fail with the generator's kind, never the
// server's: imapload cannot read what is not there. MOVE and EXPUNGE, which
// take only mail imapload appended, first append a message of their own
// (recorded in phase append, as set-up) and succeed.
func TestSessionNothingToAddress(t *testing.T) {
	srv := startTestIMAP(t, &embedded.IMAPOptions{SeedMessages: -1})
	env := newTestEnv(t, srv, nil)
	s := connected(t, env)
	unaddressable := []messages.Phase{messages.Copy, messages.Body, messages.Fetch}
	for _, p := range append(unaddressable, messages.Move, messages.Expunge) {
		s.serve(job{phase: p, intended: time.Now()})
	}
	b := cutPhases(t, env)
	for _, p := range unaddressable {
		ps := b.PhaseStats(p)
		if ps == nil || ps.Succeeded != 0 || len(ps.Errors) != 1 || !strings.HasPrefix(ps.Errors[0].Kind, messages.GeneratorKind) {
			t.Errorf("phase %v stats = %+v, want one failure of a kind starting %q", p, ps, messages.GeneratorKind)
		}
	}
	for _, p := range []messages.Phase{messages.Move, messages.Expunge} {
		if ps := b.PhaseStats(p); ps == nil || ps.Succeeded != 1 || len(ps.Errors) != 0 {
			t.Errorf("phase %v stats = %+v, want one success (of a message appended for it)", p, ps)
		}
	}
	if ps := b.PhaseStats(messages.Append); ps == nil || ps.Succeeded != 2 {
		t.Errorf("phase append stats = %+v, want the two set-up APPENDs of MOVE and EXPUNGE", ps)
	}
}
