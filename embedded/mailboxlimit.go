package embedded

import (
	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
)

// Append stores a message after making room for it: a mailbox never
// holds more than MaxMessages, so long load runs do not make SELECT (whose
// cost grows with the mailbox) slower and slower.
func (ss *session) Append(mailbox string, r imap.LiteralReader, options *imap.AppendOptions) (*imap.AppendData, error) {
	if err := ss.fault(); err != nil {
		return nil, err
	}
	ss.s.makeRoom(ss.user, mailbox)
	return ss.UserSession.Append(mailbox, r, options)
}

// makeRoom expunges the oldest messages of mailbox until one more fits
// under MaxMessages. It works through a private view, so the client sees
// only the usual EXPUNGE updates, never an error. Serializing it keeps
// concurrent APPENDs from trimming the same messages twice.
func (s *IMAP) makeRoom(u *imapmemserver.User, mailbox string) {
	if s.opts.MaxMessages < 0 {
		return
	}
	s.trimMu.Lock()
	defer s.trimMu.Unlock()
	st, err := u.Status(mailbox, &imap.StatusOptions{NumMessages: true})
	if err != nil {
		return // APPEND reports the missing mailbox itself
	}
	if excess := int64(*st.NumMessages) - int64(s.opts.MaxMessages) + 1; excess > 0 {
		expungeOldest(u, mailbox, uint32(excess))
	}
}

// expungeOldest removes the first n messages of mailbox.
func expungeOldest(u *imapmemserver.User, mailbox string, n uint32) {
	view := imapmemserver.NewUserSession(u)
	defer view.Close()
	if _, err := view.Select(mailbox, nil); err != nil {
		return
	}
	var seqs imap.SeqSet
	seqs.AddRange(1, n)
	found, err := view.Search(imapserver.NumKindUID,
		&imap.SearchCriteria{SeqNum: []imap.SeqSet{seqs}}, &imap.SearchOptions{})
	if err != nil {
		return
	}
	uids, _ := found.All.(imap.UIDSet)
	deleted := &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}
	if err := view.Store(nil, uids, deleted, nil); err != nil {
		return
	}
	_ = view.Expunge(nil, &uids)
}
