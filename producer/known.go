package producer

import (
	"cmp"
	"slices"

	"github.com/emersion/go-imap/v2"

	"github.com/imapload/imapload/messages"
)

// What a session knows of its INBOX: the messages it has seen (for FETCH,
// STORE, body, COPY), with their sizes where a FETCH told them, and the
// messages it appended itself (the only ones MOVE and EXPUNGE may take away:
// imapload never destroys mail it did not put there).

const (
	knownUIDs    = 64 // UIDs a session remembers for FETCH and STORE
	recentWindow = 10 // a "recent" FETCH reads one of the newest recentWindow messages
	bodyChoices  = 3  // a body FETCH reads the largest known of this many random picks
)

// known is one message of INBOX the session has seen: its UID and, once a
// FETCH said it, its RFC822.SIZE (0 while unknown).
type known struct {
	uid  imap.UID
	size int64
}

// target picks the message of a FETCH or STORE: a random remembered UID, or
// else a random sequence number. uid is the UID picked, 0 for a sequence
// number; ok is false when INBOX is empty.
func (s *session) target() (set imap.NumSet, uid imap.UID, ok bool) {
	if len(s.uids) > 0 {
		uid = s.uids[s.rng.IntN(len(s.uids))].uid
		return imap.UIDSetNum(uid), uid, true
	}
	n := s.exists.Load()
	if n <= 0 {
		return nil, 0, false
	}
	return imap.SeqSetNum(1 + uint32(s.rng.Int64N(n))), 0, true
}

// fetchTarget picks the message the fetch and body phases read, as the
// step's fetch_target asks: FetchRecent is one of the newest recentWindow
// messages of INBOX by sequence number (or the newest known UID when the
// count is unknown); FetchRandom is target's pick, and for a body the
// largest known of bodyChoices such picks.
func (s *session) fetchTarget(body bool) (set imap.NumSet, uid imap.UID, ok bool) {
	if s.env.fetchTarget == messages.FetchRecent {
		return s.recentTarget()
	}
	set, uid, ok = s.target()
	if !body || uid == 0 {
		return set, uid, ok
	}
	best := s.uids[slices.IndexFunc(s.uids, func(k known) bool { return k.uid == uid })]
	for range bodyChoices - 1 {
		if k := s.uids[s.rng.IntN(len(s.uids))]; k.size > best.size {
			best = k
		}
	}
	return imap.UIDSetNum(best.uid), best.uid, true
}

// recentTarget is one of the newest messages of INBOX.
func (s *session) recentTarget() (set imap.NumSet, uid imap.UID, ok bool) {
	if n := s.exists.Load(); n > 0 {
		w := min(n, recentWindow)
		return imap.SeqSetNum(uint32(n - s.rng.Int64N(w))), 0, true
	}
	if len(s.uids) == 0 {
		return nil, 0, false
	}
	uid = slices.MaxFunc(s.uids, func(a, b known) int { return cmp.Compare(a.uid, b.uid) }).uid
	return imap.UIDSetNum(uid), uid, true
}

// learn remembers uid (and its size, when size > 0), forgetting the oldest
// beyond knownUIDs.
func (s *session) learn(uid imap.UID, size int64) {
	if uid == 0 {
		return
	}
	if i := slices.IndexFunc(s.uids, func(k known) bool { return k.uid == uid }); i >= 0 {
		s.uids[i].size = max(s.uids[i].size, size)
		return
	}
	if len(s.uids) >= knownUIDs {
		s.uids = slices.Delete(s.uids, 0, 1)
	}
	s.uids = append(s.uids, known{uid: uid, size: size})
}

// forget drops uid from what the session knows: it was expunged or moved
// away.
func (s *session) forget(uid imap.UID) {
	s.uids = slices.DeleteFunc(s.uids, func(k known) bool { return k.uid == uid })
}

// appended notes uid as a message imapload appended to the account's INBOX,
// for any session of the account in this step to MOVE or EXPUNGE later
// (see accountPool.addOwn).
func (s *session) appended(uid imap.UID) {
	if uid != 0 {
		s.env.pool.addOwn(s.acct, uid)
	}
}

// ownTarget takes a message imapload appended to the account's INBOX, the
// only kind MOVE and EXPUNGE may take away; no other session will be given
// it. ok is false when there is none.
func (s *session) ownTarget() (uid imap.UID, ok bool) {
	return s.env.pool.takeOwn(s.acct, s.rng)
}
