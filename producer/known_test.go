package producer

import (
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/imapload/imapload/messages"
)

// TestFetchTargetRecent: a "recent" FETCH reads one of the newest
// recentWindow messages of INBOX by sequence number, every one of them in
// time; with no count known, the newest known UID.
func TestFetchTargetRecent(t *testing.T) {
	s := newSession(&sessionEnv{fetchTarget: messages.FetchRecent}, 0, 1)
	s.exists.Store(100)
	seen := map[uint32]int{}
	for range 500 {
		set, uid, ok := s.fetchTarget(false)
		seq, isSeq := set.(imap.SeqSet)
		if !ok || uid != 0 || !isSeq || len(seq) != 1 || seq[0].Start != seq[0].Stop {
			t.Fatalf("fetchTarget() = %v, %d, %v; want one sequence number", set, uid, ok)
		}
		seen[seq[0].Start]++
	}
	for n := uint32(91); n <= 100; n++ {
		if seen[n] == 0 {
			t.Errorf("fetchTarget() never picked message %d of the newest 10: %v", n, seen)
		}
	}
	if len(seen) != recentWindow {
		t.Errorf("fetchTarget() picked %d distinct messages %v, want the newest %d only", len(seen), seen, recentWindow)
	}
	s.exists.Store(0)
	s.learn(7, 0)
	s.learn(42, 0)
	s.learn(9, 0)
	if _, uid, ok := s.fetchTarget(true); !ok || uid != 42 {
		t.Errorf("fetchTarget() with no count = UID %d, %v; want the newest known, 42", uid, ok)
	}
}

// TestFetchTargetBodyPrefersLarge: a random body FETCH reads the largest
// known of bodyChoices random picks, so large messages are read far more
// often than small ones; a listing FETCH picks uniformly.
func TestFetchTargetBodyPrefersLarge(t *testing.T) {
	s := newSession(&sessionEnv{fetchTarget: messages.FetchRandom}, 0, 1)
	for i := range 10 {
		s.learn(imap.UID(i+1), int64(1000*(i+1)))
	}
	body, listing := map[imap.UID]int{}, map[imap.UID]int{}
	for range 2000 {
		_, uid, _ := s.fetchTarget(true)
		body[uid]++
		_, uid, _ = s.fetchTarget(false)
		listing[uid]++
	}
	if body[10] < 4*body[5] || body[1] > body[10]/20 {
		t.Errorf("body FETCH picks by UID (size grows with UID) = %v, want the largest far more often than the smallest", body)
	}
	if listing[1] < 100 || listing[10] > 3*listing[1] {
		t.Errorf("listing FETCH picks = %v, want roughly uniform", listing)
	}
}

// TestKnownBounded: a session remembers at most knownUIDs messages, and an
// account at most knownUIDs of its own; forgetting a message drops it.
func TestKnownBounded(t *testing.T) {
	s := newSession(&sessionEnv{pool: newAccountPool([]Account{{User: "u"}}, 2, 1)}, 0, 1)
	s.acct = 0
	for i := range 3 * knownUIDs {
		s.learn(imap.UID(i+1), 10)
		s.appended(imap.UID(i + 1))
	}
	own := s.env.pool.own[0]
	if len(s.uids) != knownUIDs || len(own) != knownUIDs || s.uids[0].uid != imap.UID(2*knownUIDs+1) || own[0] != imap.UID(2*knownUIDs+1) {
		t.Fatalf("after %d: %d known (oldest %d), %d own; want the newest %d of each", 3*knownUIDs, len(s.uids), s.uids[0].uid, len(own), knownUIDs)
	}
	last := imap.UID(3 * knownUIDs)
	s.forget(last)
	if len(s.uids) != knownUIDs-1 {
		t.Errorf("after forget(%d): %d known; want %d", last, len(s.uids), knownUIDs-1)
	}
	s.learn(0, 5)
	s.appended(0)
	if len(s.uids) != knownUIDs-1 || len(s.env.pool.own[0]) != knownUIDs {
		t.Errorf("UID 0 (not said) was remembered")
	}
}

// TestOwnSharedByAccount: a message one session of an account appended is
// another session's to MOVE or EXPUNGE (sessions are short; the message
// stays imapload's), each is given to one session only, and an account's
// messages are never another account's.
func TestOwnSharedByAccount(t *testing.T) {
	env := &sessionEnv{pool: newAccountPool([]Account{{User: "a"}, {User: "b"}}, 2, 1)}
	s1, s2, other := newSession(env, 0, 1), newSession(env, 1, 1), newSession(env, 2, 1)
	s1.acct, s2.acct, other.acct = 0, 0, 1
	s1.appended(7)
	s1.appended(8)
	if _, ok := other.ownTarget(); ok {
		t.Errorf("another account's session was given account a's message")
	}
	got := map[imap.UID]bool{}
	for _, s := range []*session{s2, s1} {
		uid, ok := s.ownTarget()
		if !ok || got[uid] {
			t.Fatalf("ownTarget() = %d, %v after %v; want 7 or 8, each once", uid, ok, got)
		}
		got[uid] = true
	}
	if uid, ok := s2.ownTarget(); ok {
		t.Errorf("ownTarget() = %d after both were taken, want none", uid)
	}
}

// TestCheckCountsUnaddressable: an APPEND the server named no UID for is
// counted as one no integrity check could address.
func TestCheckCountsUnaddressable(t *testing.T) {
	srv := startTestIMAP(t, nil)
	env := newTestEnv(t, srv, nil)
	s := connected(t, env)
	for range 3 {
		s.check(job{phase: messages.Append, intended: time.Now()}, outcome{raw: []byte("x")})
	}
	if c := cutPhases(t, env).Checks; c != (messages.Checks{Unaddressable: 3}) {
		t.Errorf("batch checks = %+v, want 3 unaddressable, none run", c)
	}
}

// TestTrimBoundsOwnMailbox: COPYs keep imapload's own mailbox under
// ownMailboxCap, INBOX keeps every message, and the session ends with INBOX
// selected again.
func TestTrimBoundsOwnMailbox(t *testing.T) {
	srv := startTestIMAP(t, nil)
	env := newTestEnv(t, srv, nil)
	s := connected(t, env)
	copies := ownMailboxCap + 2*trimEvery
	for range copies {
		s.serve(job{phase: messages.Copy, intended: time.Now()})
	}
	st, err := s.c.Status(ownMailbox, &imap.StatusOptions{NumMessages: true}).Wait()
	if err != nil {
		t.Fatalf("STATUS %s error = %v", ownMailbox, err)
	}
	if n := *st.NumMessages; n > ownMailboxCap || n < ownMailboxCap/2 {
		t.Errorf("after %d COPYs, %s holds %d messages, want %d to %d", copies, ownMailbox, n, ownMailboxCap/2, ownMailboxCap)
	}
	if !s.selected || s.exists.Load() != 5 {
		t.Errorf("after trims: INBOX selected %v with %d messages, want selected with its 5 seeded", s.selected, s.exists.Load())
	}
	ps := cutPhases(t, env).PhaseStats(messages.Copy)
	if ps == nil || ps.Succeeded != uint64(copies) {
		t.Errorf("copy stats = %+v, want %d succeeded", ps, copies)
	}
}
