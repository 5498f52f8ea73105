package producer

import (
	"errors"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/imapload/imapload/messages"
)

// imapload's own mailbox. COPY files a message of INBOX there, MOVE takes a
// message imapload appended there; nothing else goes there, so all of it is
// imapload's, and the sessions keep it bounded (trim). MOVE and EXPUNGE
// never touch a message imapload did not append: seeded and users' mail is
// read, flagged \Seen and copied, never moved or destroyed.

// ownMailbox is the mailbox COPY and MOVE file messages in, created on demand.
const ownMailbox = "imapload-copies"

const (
	trimEvery     = 32  // a session looks at ownMailbox's size after this many COPYs and MOVEs
	ownMailboxCap = 200 // past this many messages, ownMailbox's oldest are expunged down to half
)

// deletedFlag marks a message for EXPUNGE.
var deletedFlag = &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}

// prepare makes sure, before a session's first COPY or MOVE, that ownMailbox
// exists (CREATE; NO [ALREADYEXISTS] is as good). The CREATE is not a
// measured command of its own: it adds to j's response time, not to its
// service time. If it fails, j is recorded with its error and not sent. It
// returns whether j may be sent.
//
// Before a MOVE or EXPUNGE, when the account holds no message of
// imapload's, it appends one (see appendOwn).
func (s *session) prepare(j job) bool {
	if (j.phase == messages.Move || j.phase == messages.Expunge) && !s.env.pool.hasOwn(s.acct) {
		s.appendOwn()
	}
	if (j.phase != messages.Copy && j.phase != messages.Move) || s.ownReady {
		return true
	}
	start := time.Now()
	err := blame(s.guard(s.env.cfg.OpTimeout, s.createOwn))
	if err == nil {
		s.ownReady = true
		return true
	}
	s.env.scheduled(j, start, time.Now(), err)
	if s.closed() {
		s.lost()
	}
	return false
}

// appendOwn appends a message for a MOVE or EXPUNGE to take: a client files
// or deletes mail it has, and imapload only takes mail it put there itself.
// The APPEND is the server's work, so it is recorded in phase append as
// set-up (a reconnect's SELECT is recorded in phase select alike): in the
// command's response time, not in its service time. If it fails, the
// command has nothing to address.
func (s *session) appendOwn() {
	_ = s.setupStep(messages.Append, func() error {
		_, _, err := s.append()
		return err
	})
}

func (s *session) createOwn() error {
	err := s.c.Create(ownMailbox, nil).Wait()
	if hasCode(err, imap.ResponseCodeAlreadyExists) {
		return nil
	}
	return err
}

// hasCode reports whether err is the server's NO or BAD with response code.
func hasCode(err error, code imap.ResponseCode) bool {
	var ie *imap.Error
	return errors.As(err, &ie) && ie.Code == code
}

// copyOwn is UID COPY of one message of INBOX to ownMailbox [§6.4.7]: a
// client filing a message. INBOX keeps the original.
func (s *session) copyOwn() error {
	set, _, ok := s.target()
	if !ok {
		return errEmptyMailbox
	}
	_, err := s.c.Copy(set, ownMailbox).Wait()
	return s.ownGone(err)
}

// move is UID MOVE (RFC 6851, §6.4.8) of a message imapload appended to the
// account, to ownMailbox. Without the MOVE capability it is not sent: go-imap would fall
// back to COPY, STORE \Deleted and EXPUNGE, and a plain EXPUNGE takes every
// message marked \Deleted, a user's too.
func (s *session) move() error {
	uid, ok := s.ownTarget()
	switch {
	case !ok:
		return errNothingToMove
	case !s.c.Caps().Has(imap.CapMove):
		return errNoMove
	}
	_, err := s.c.Move(imap.UIDSetNum(uid), ownMailbox).Wait()
	if err == nil {
		s.forget(uid)
	}
	return s.ownGone(err)
}

// expunge is UID STORE +FLAGS.SILENT (\Deleted), then UID EXPUNGE (RFC 4315,
// §6.4.9) of a message imapload appended to the account: a client deleting
// a message.
// The figure covers both commands.
func (s *session) expunge() error {
	uid, ok := s.ownTarget()
	switch {
	case !ok:
		return errNothingToExpunge
	case !s.c.Caps().Has(imap.CapUIDPlus):
		return errNoUIDPlus
	}
	set := imap.UIDSetNum(uid)
	if err := s.c.Store(set, deletedFlag, nil).Close(); err != nil {
		return err
	}
	gone, err := s.c.UIDExpunge(set).Collect()
	if err != nil {
		return err
	}
	// go-imap hands this command's EXPUNGE responses to it, not to the
	// unilateral handler that counts INBOX's messages.
	s.exists.Add(-int64(len(gone)))
	s.forget(uid)
	return nil
}

// ownGone notes a COPY or MOVE refused with TRYCREATE (ownMailbox was
// deleted meanwhile): the next one creates it again.
func (s *session) ownGone(err error) error {
	if hasCode(err, imap.ResponseCodeTryCreate) {
		s.ownReady = false
	}
	return err
}

// trim keeps ownMailbox bounded. Every trimEvery COPYs and MOVEs a session
// asks its size (STATUS), and past ownMailboxCap selects it, marks its
// oldest messages \Deleted down to half the cap, expunges them and selects
// INBOX again. Everything in ownMailbox is imapload's, so a plain EXPUNGE
// there destroys nothing else. It is housekeeping, not recorded: a failure
// leaves no mailbox selected (the next command reselects) or the
// connection lost (the session reconnects).
func (s *session) trim() {
	if s.filed++; s.filed < trimEvery {
		return
	}
	s.filed = 0
	_ = s.guard(s.env.cfg.OpTimeout, s.trimOwn)
	if s.closed() {
		s.lost()
	}
}

func (s *session) trimOwn() error {
	st, err := s.c.Status(ownMailbox, &imap.StatusOptions{NumMessages: true}).Wait()
	if err != nil || st.NumMessages == nil || *st.NumMessages <= ownMailboxCap {
		return err
	}
	s.selected = false // from the SELECT on, INBOX is not
	data, err := s.c.Select(ownMailbox, nil).Wait()
	if err != nil || data.NumMessages <= ownMailboxCap/2 { // another session trimmed it meanwhile
		return err
	}
	var oldest imap.SeqSet
	oldest.AddRange(1, data.NumMessages-ownMailboxCap/2)
	if err := s.c.Store(oldest, deletedFlag, nil).Close(); err != nil {
		return err
	}
	if err := s.c.Expunge().Close(); err != nil {
		return err
	}
	return s.selectInbox()
}
