package producer

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/imapload/imapload/messages"
)

// The scheduled commands, one function each (RFC 9051 section in brackets).

const (
	knownUIDs   = 64 // UIDs a session remembers for FETCH and STORE
	verifyEvery = 10 // about one APPEND in verifyEvery is fetched back and compared
)

// Items of a scheduled FETCH: what a mail client lists and opens.
// The header fields are those a desktop client (Thunderbird) asks for to list
// a message; they cost the client a third less CPU than ENVELOPE, whose date
// parsing dominated a FETCH in the producer's profile (BENCHMARKS.md).
var fetchOptions = &imap.FetchOptions{
	UID: true, Flags: true, RFC822Size: true,
	BodySection: []*imap.FetchItemBodySection{
		{Specifier: imap.PartSpecifierHeader, HeaderFields: []string{"Date", "From", "To", "Subject", "Message-ID"}, Peek: true},
		{Peek: true},
	},
}

// Items of an integrity FETCH: the whole message, without setting \Seen.
var bodyOptions = &imap.FetchOptions{
	UID: true, BodySection: []*imap.FetchItemBodySection{{Peek: true}},
}

// serve runs one scheduled command and records it. A FETCH or STORE on a
// session with no mailbox selected first selects INBOX again (reselect).
// After a LOGOUT, or when the command broke the connection, the session is
// disconnected; the run loop reconnects it.
func (s *session) serve(j job) {
	if needsMailbox(j.phase) && !s.selected && !s.reselect(j) {
		return
	}
	sent := time.Now()
	uid, raw, err := s.command(j.phase)
	s.env.scheduled(j, sent, time.Now(), err)
	switch {
	case j.phase == messages.Logout:
		s.disconnect()
		if err != nil {
			s.failures = max(s.failures, 1)
		}
	case s.closed():
		s.lost()
	case raw != nil && uid != 0 && s.selected && s.rng.IntN(verifyEvery) == 0:
		s.verify(j, uid, raw)
	}
}

// needsMailbox reports whether phase p is only valid in the selected state.
func needsMailbox(p messages.Phase) bool { return p == messages.Fetch || p == messages.Store }

// reselect selects INBOX again for j, a FETCH or STORE that came to a
// session whose last SELECT failed: sent now, j would only earn a BAD from
// the server, an error imapload caused. The SELECT is recorded like a
// reconnect's (phase select). If it fails too, j is not sent: it fails with
// a generator kind (the server's error is the SELECT's, already recorded),
// and the session drops its connection and reconnects after a backoff, so a
// server refusing SELECT is not asked again at the offered rate. It
// returns whether j may be sent.
func (s *session) reselect(j job) bool {
	start := time.Now()
	if s.setupStep(messages.Select, s.selectInbox) == nil {
		return true
	}
	s.env.scheduled(j, start, time.Now(), errNotSelected)
	s.lost()
	return false
}

// command runs phase p within the operation timeout. For an APPEND it also
// returns the new message's UID (0 if the server did not say) and bytes.
func (s *session) command(p messages.Phase) (imap.UID, []byte, error) {
	var uid imap.UID
	var raw []byte
	var op func() error
	switch p {
	case messages.List:
		op = s.list
	case messages.Select:
		op = s.selectInbox
	case messages.Fetch:
		op = s.fetch
	case messages.Store:
		op = s.store
	case messages.Append:
		op = func() (err error) { uid, raw, err = s.append(); return err }
	case messages.Logout:
		op = func() error { return s.c.Logout().Wait() }
	default:
		return 0, nil, fmt.Errorf("%w: phase %v", errNotScheduled, p)
	}
	err := s.guard(s.env.cfg.OpTimeout, op)
	return uid, raw, blame(err)
}

// list is LIST "" "*" [§6.3.9].
func (s *session) list() error {
	_, err := s.c.List("", "*", nil).Collect()
	return err
}

// selectInbox is SELECT INBOX [§6.3.2]. It notes the message count from the
// command's own data: imapclient updates Client.Mailbox only after Wait has
// returned, so reading it right away is a race.
//
// A SELECT that fails leaves no mailbox selected, even if one was before
// (§6.3.2), so the session notes whether INBOX is selected: FETCH and STORE
// are only valid in the selected state.
func (s *session) selectInbox() error {
	data, err := s.c.Select("INBOX", nil).Wait()
	s.selected = err == nil
	if err == nil {
		s.exists.Store(int64(data.NumMessages))
	}
	return err
}

// fetch is FETCH of one message's flags, size, listing headers and body, without setting
// \Seen (BODY.PEEK[]) [§6.4.5]: by UID when the session knows some, else by
// a random sequence number of the selected INBOX.
func (s *session) fetch() error {
	set, uid, ok := s.target()
	if !ok {
		return errEmptyMailbox
	}
	msgs, err := s.c.Fetch(set, fetchOptions).Collect()
	if err != nil {
		return err
	}
	if uid != 0 && len(msgs) == 0 {
		s.forget(uid) // expunged meanwhile, by another session
	}
	for _, m := range msgs {
		s.learn(m.UID)
	}
	return nil
}

// store is STORE +FLAGS.SILENT (\Seen) on one message [§6.4.6].
func (s *session) store() error {
	set, _, ok := s.target()
	if !ok {
		return errEmptyMailbox
	}
	flags := &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagSeen}}
	return s.c.Store(set, flags, nil).Close()
}

// append is APPEND of a small generated message to INBOX [§6.3.12]; the UID
// comes from the APPENDUID response code (RFC 4315, part of IMAP4rev2).
func (s *session) append() (imap.UID, []byte, error) {
	s.appends++
	raw := newMessage(s.env.pool.account(s.acct).User, s.env.cfg.ID, s.appends, time.Now(), s.rng)
	cmd := s.c.Append("INBOX", int64(len(raw)), nil)
	if _, err := cmd.Write(raw); err != nil {
		cmd.Close()
		return 0, nil, err
	}
	if err := cmd.Close(); err != nil {
		return 0, nil, err
	}
	data, err := cmd.Wait()
	if err != nil {
		return 0, nil, err
	}
	s.learn(data.UID)
	return data.UID, raw, nil
}

// verify fetches an appended message back and compares it byte for byte. It
// is not a scheduled command: it is recorded in phase Fetch (if the APPEND
// was in the window), and a mismatch or a missing message is errIntegrity.
func (s *session) verify(j job, uid imap.UID, raw []byte) {
	start := time.Now()
	err := s.guard(s.env.cfg.OpTimeout, func() error {
		msgs, err := s.c.Fetch(imap.UIDSetNum(uid), bodyOptions).Collect()
		switch {
		case err != nil:
			return err
		case len(msgs) != 1 || !bytes.Equal(msgs[0].FindBodySection(bodyOptions.BodySection[0]), raw):
			return errIntegrity
		}
		return nil
	})
	s.env.unscheduled(messages.Fetch, j.intended, start, time.Now(), err)
	if s.closed() {
		s.lost()
	}
}

// target picks the message of a FETCH or STORE: a random remembered UID, or
// else a random sequence number. uid is the UID picked, 0 for a sequence
// number; ok is false when INBOX is empty.
func (s *session) target() (set imap.NumSet, uid imap.UID, ok bool) {
	if len(s.uids) > 0 {
		uid = s.uids[s.rng.IntN(len(s.uids))]
		return imap.UIDSetNum(uid), uid, true
	}
	n := s.exists.Load()
	if n <= 0 {
		return nil, 0, false
	}
	return imap.SeqSetNum(1 + uint32(s.rng.Int64N(n))), 0, true
}

// learn remembers uid, forgetting the oldest beyond knownUIDs.
func (s *session) learn(uid imap.UID) {
	if uid == 0 || slices.Contains(s.uids, uid) {
		return
	}
	if len(s.uids) >= knownUIDs {
		copy(s.uids, s.uids[1:])
		s.uids = s.uids[:len(s.uids)-1]
	}
	s.uids = append(s.uids, uid)
}

func (s *session) forget(uid imap.UID) {
	for i, u := range s.uids {
		if u == uid {
			s.uids = append(s.uids[:i], s.uids[i+1:]...)
			return
		}
	}
}
