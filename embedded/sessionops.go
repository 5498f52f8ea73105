package embedded

import (
	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
)

// The mailbox operations below delegate to imapmemserver after the
// NoFraction draw. LOGIN, LOGOUT, NOOP/CHECK (Poll), IDLE, CAPABILITY and
// the implicit UNSELECT of a re-SELECT never fail on purpose.

// orNext is err, or next's error when err is nil.
func orNext(err error, next func() error) error {
	if err != nil {
		return err
	}
	return next()
}

// fault draws the NoFraction fault for one operation.
func (ss *session) fault() error {
	if !ss.s.faults.injectNo() {
		return nil
	}
	ss.s.stats.noReplies.Add(1)
	return errInjectedNo
}

// refused draws a Refuse… fault of fraction for one command.
func (ss *session) refused(fraction float64) error {
	if !ss.s.faults.draw(fraction) {
		return nil
	}
	ss.s.stats.noReplies.Add(1)
	return errInjectedNo
}

func (ss *session) Select(mailbox string, options *imap.SelectOptions) (*imap.SelectData, error) {
	if err := orNext(ss.refused(ss.s.opts.RefuseSelect), ss.fault); err != nil {
		return nil, err
	}
	return ss.UserSession.Select(mailbox, options)
}

func (ss *session) Create(mailbox string, options *imap.CreateOptions) error {
	if err := ss.fault(); err != nil {
		return err
	}
	return ss.UserSession.Create(mailbox, options)
}

func (ss *session) Delete(mailbox string) error {
	if err := ss.fault(); err != nil {
		return err
	}
	return ss.UserSession.Delete(mailbox)
}

func (ss *session) Rename(mailbox, newName string, options *imap.RenameOptions) error {
	if err := ss.fault(); err != nil {
		return err
	}
	return ss.UserSession.Rename(mailbox, newName, options)
}

func (ss *session) Subscribe(mailbox string) error {
	if err := ss.fault(); err != nil {
		return err
	}
	return ss.UserSession.Subscribe(mailbox)
}

func (ss *session) Unsubscribe(mailbox string) error {
	if err := ss.fault(); err != nil {
		return err
	}
	return ss.UserSession.Unsubscribe(mailbox)
}

func (ss *session) List(w *imapserver.ListWriter, ref string, patterns []string, options *imap.ListOptions) error {
	if err := orNext(ss.refused(ss.s.opts.RefuseList), ss.fault); err != nil {
		return err
	}
	return ss.UserSession.List(w, ref, patterns, options)
}

func (ss *session) Status(mailbox string, options *imap.StatusOptions) (*imap.StatusData, error) {
	if err := ss.fault(); err != nil {
		return nil, err
	}
	return ss.UserSession.Status(mailbox, options)
}

func (ss *session) Namespace() (*imap.NamespaceData, error) {
	if err := ss.fault(); err != nil {
		return nil, err
	}
	return ss.UserSession.Namespace()
}

func (ss *session) Expunge(w *imapserver.ExpungeWriter, uids *imap.UIDSet) error {
	if err := ss.fault(); err != nil {
		return err
	}
	return ss.UserSession.Expunge(w, uids)
}

func (ss *session) Search(kind imapserver.NumKind, criteria *imap.SearchCriteria, options *imap.SearchOptions) (*imap.SearchData, error) {
	if err := ss.fault(); err != nil {
		return nil, err
	}
	return ss.UserSession.Search(kind, criteria, options)
}

func (ss *session) Fetch(w *imapserver.FetchWriter, numSet imap.NumSet, options *imap.FetchOptions) error {
	if err := ss.fault(); err != nil {
		return err
	}
	return ss.UserSession.Fetch(w, numSet, options)
}

func (ss *session) Store(w *imapserver.FetchWriter, numSet imap.NumSet, flags *imap.StoreFlags, options *imap.StoreOptions) error {
	if err := ss.fault(); err != nil {
		return err
	}
	return ss.UserSession.Store(w, numSet, flags, options)
}

// Copy answers as a real server does when another session of the account
// expunged the messages meanwhile: imapmemserver would answer OK with a
// COPYUID of empty sets ("OK [COPYUID 1  ]"), which is no valid response
// code and which clients cannot parse (see copiedNothing).
func (ss *session) Copy(numSet imap.NumSet, dest string) (*imap.CopyData, error) {
	if err := ss.fault(); err != nil {
		return nil, err
	}
	data, err := ss.UserSession.Copy(numSet, dest)
	if err != nil || len(data.SourceUIDs) > 0 {
		return data, err
	}
	return copiedNothing(numSet)
}

// errExpungeIssued is the answer to a COPY by sequence number of messages
// another session expunged (RFC 9051 §7.1, EXPUNGEISSUED), in Dovecot's
// words.
var errExpungeIssued = &imap.Error{
	Type: imap.StatusResponseTypeNo,
	Code: "EXPUNGEISSUED",
	Text: "Some of the requested messages no longer exist",
}

// copiedNothing is the answer to a COPY that found none of its messages: a
// UID COPY of UIDs that no longer exist is OK without COPYUID (RFC 9051
// §6.4.9: "a non-existent unique identifier is ignored"); a COPY by
// sequence number is NO [EXPUNGEISSUED] (RFC 2180 §4.1.3 allows it).
func copiedNothing(numSet imap.NumSet) (*imap.CopyData, error) {
	if _, uids := numSet.(imap.UIDSet); uids {
		return nil, nil
	}
	return nil, errExpungeIssued
}

func (ss *session) Move(w *imapserver.MoveWriter, numSet imap.NumSet, dest string) error {
	if err := ss.fault(); err != nil {
		return err
	}
	return ss.UserSession.Move(w, numSet, dest)
}
