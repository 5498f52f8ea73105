package producer

import (
	"bytes"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/imapload/imapload/messages"
)

// The scheduled commands, one function each (RFC 9051 section in brackets).

// verifyEvery: about one APPEND in verifyEvery is fetched back and compared.
const verifyEvery = 10

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

// outcome is what a command leaves to serve: an APPEND's new UID (0 if the
// server did not say) and bytes, for the integrity check; and for a command
// whose figure is not its own round trip (IDLE's push latency), the moments
// its measured time starts and ends.
type outcome struct {
	uid      imap.UID
	raw      []byte
	from, to time.Time
}

// serve runs one scheduled command and records it. A command that needs a
// selected mailbox, on a session with none, first selects INBOX again
// (reselect); a COPY or MOVE first makes sure imapload's own mailbox exists
// (prepare). After a LOGOUT, or when the command broke the connection, the
// session is disconnected; the run loop reconnects it.
func (s *session) serve(j job) {
	if needsMailbox(j.phase) && !s.selected && !s.reselect(j) {
		return
	}
	if !s.prepare(j) {
		return
	}
	sent := time.Now()
	out, err := s.command(j.phase)
	end := time.Now()
	if !out.from.IsZero() {
		sent, end = out.from, out.to
	}
	s.env.scheduled(j, sent, end, err)
	switch {
	case j.phase == messages.Logout:
		s.disconnect()
		if err != nil {
			s.failures = max(s.failures, 1)
		}
	case s.closed():
		s.lost()
	case out.raw != nil:
		s.check(j, out)
	case err == nil && (j.phase == messages.Copy || j.phase == messages.Move):
		s.trim()
	}
}

// check runs the integrity check of about one APPEND in verifyEvery, and
// counts an APPEND whose UID the server did not say (no UIDPLUS) as one no
// check could address.
func (s *session) check(j job, out outcome) {
	switch {
	case out.uid == 0:
		s.env.uncheckable(j)
	case s.selected && s.rng.IntN(verifyEvery) == 0:
		s.verify(j, out.uid, out.raw)
	}
}

// needsMailbox reports whether phase p is only valid in the selected state.
func needsMailbox(p messages.Phase) bool {
	switch p {
	case messages.Fetch, messages.Store, messages.Body, messages.SearchDate, messages.SearchHeader,
		messages.Copy, messages.Move, messages.Expunge, messages.Idle:
		return true
	}
	return false
}

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

// command runs phase p within the operation timeout.
func (s *session) command(p messages.Phase) (outcome, error) {
	switch p {
	case messages.Append:
		return s.appendCommand()
	case messages.Idle:
		return s.idleCommand()
	}
	// A closure, not a method value: it stays on the stack.
	return outcome{}, blame(s.guard(s.env.cfg.OpTimeout, func() error { return s.send(p) }))
}

// appendCommand is append within the operation timeout. (Apart from
// command, so that the other commands' outcome does not escape to the heap.)
func (s *session) appendCommand() (out outcome, err error) {
	err = s.guard(s.env.cfg.OpTimeout, func() (err error) { out.uid, out.raw, err = s.append(); return err })
	return out, blame(err)
}

// send sends the command of phase p (not APPEND or IDLE, see command).
func (s *session) send(p messages.Phase) error {
	switch p {
	case messages.List:
		return s.list()
	case messages.Select:
		return s.selectInbox()
	case messages.Fetch:
		return s.fetch()
	case messages.Store:
		return s.store()
	case messages.Logout:
		return s.c.Logout().Wait()
	}
	return s.runClient(p)
}

// list is LIST "" "*" [§6.3.9]. The session remembers a few of the
// mailboxes listed, for STATUS.
func (s *session) list() error {
	boxes, err := s.c.List("", "*", nil).Collect()
	s.noteFolders(boxes)
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
// a random sequence number of the selected INBOX (see fetchTarget for the
// step's fetch_target).
func (s *session) fetch() error {
	set, uid, ok := s.fetchTarget(false)
	if !ok {
		return errEmptyMailbox
	}
	return s.fetchDrained(set, uid, fetchOptions)
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

// append is APPEND of a small generated message to INBOX [§6.3.12] (see
// appendTo); the message is imapload's own.
func (s *session) append() (imap.UID, []byte, error) {
	uid, raw, err := appendTo(s.c, s.newMessage())
	s.learn(uid, int64(len(raw)))
	s.appended(uid)
	return uid, raw, err
}

// newMessage is the session's next generated message.
func (s *session) newMessage() []byte {
	s.appends++
	return newMessage(s.env.pool.account(s.acct).User, s.env.cfg.ID, s.appends, time.Now(), s.rng)
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
	s.env.checked(j, err)
	if s.closed() {
		s.lost()
	}
}
