package producer

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/imapload/imapload/messages"
)

// The commands real mail clients send beside listing and reading (RFC 9051
// section in brackets): they run only when a step's mix names them.

const (
	knownFolders  = 16 // mailboxes a session remembers from LIST, for STATUS
	searchDaysMax = 30 // SEARCH SINCE goes back 1 to searchDaysMax days
)

// Items of a STATUS: what a desktop client polls for each folder.
var statusOptions = &imap.StatusOptions{NumMessages: true, UIDNext: true, NumUnseen: true}

// Items of a body FETCH: the whole message, without setting \Seen, and its
// UID and size, which later body FETCHes choose by.
var bodyFetchOptions = &imap.FetchOptions{
	UID: true, RFC822Size: true, BodySection: []*imap.FetchItemBodySection{{Peek: true}},
}

// searchHeaders are the header fields and words of a header SEARCH: some
// match imapload's and the seeded messages, some match nothing.
var searchHeaders = []imap.SearchCriteriaHeaderField{
	{Key: "Subject", Value: "imapload"}, {Key: "Subject", Value: "message"}, {Key: "Subject", Value: "invoice"},
	{Key: "From", Value: "imapload"}, {Key: "From", Value: "example"}, {Key: "From", Value: "nobody"},
}

// runClient sends the command of a client phase; any other phase is
// errNotScheduled.
func (s *session) runClient(p messages.Phase) error {
	switch p {
	case messages.Status:
		return s.status()
	case messages.SearchDate:
		return s.searchDate()
	case messages.SearchHeader:
		return s.searchHeader()
	case messages.Body:
		return s.body()
	case messages.Copy:
		return s.copyOwn()
	case messages.Move:
		return s.move()
	case messages.Expunge:
		return s.expunge()
	case messages.Noop:
		return s.c.Noop().Wait() // [§6.1.2]
	}
	return fmt.Errorf("%w: phase %v", errNotScheduled, p)
}

// status is STATUS (MESSAGES UIDNEXT UNSEEN) [§6.3.11] of a mailbox the
// session's LIST showed, or of INBOX when it knows no other: a desktop
// client polling its folders.
func (s *session) status() error {
	box := "INBOX"
	if n := len(s.folders); n > 0 && s.rng.IntN(n+1) > 0 {
		box = s.folders[s.rng.IntN(n)]
	}
	_, err := s.c.Status(box, statusOptions).Wait()
	return err
}

// noteFolders remembers up to knownFolders selectable mailboxes other than
// INBOX from a LIST.
func (s *session) noteFolders(boxes []*imap.ListData) {
	for _, b := range boxes {
		if len(s.folders) >= knownFolders {
			return
		}
		if strings.EqualFold(b.Mailbox, "INBOX") || slices.Contains(s.folders, b.Mailbox) || noSelect(b.Attrs) {
			continue
		}
		s.folders = append(s.folders, b.Mailbox)
	}
}

func noSelect(attrs []imap.MailboxAttr) bool {
	return slices.ContainsFunc(attrs, func(a imap.MailboxAttr) bool {
		return strings.EqualFold(string(a), string(imap.MailboxAttrNoSelect)) ||
			strings.EqualFold(string(a), string(imap.MailboxAttrNonExistent))
	})
}

// searchDate is UID SEARCH SINCE a date 1 to searchDaysMax days back [§6.4.4]:
// a client showing the last days' mail.
func (s *session) searchDate() error {
	since := time.Now().AddDate(0, 0, -1-s.rng.IntN(searchDaysMax))
	_, err := s.c.UIDSearch(&imap.SearchCriteria{Since: since}, nil).Wait()
	return err
}

// searchHeader is UID SEARCH HEADER Subject or From a word [§6.4.4]: a
// client's quick search, which the server answers by reading headers.
func (s *session) searchHeader() error {
	h := searchHeaders[s.rng.IntN(len(searchHeaders))]
	_, err := s.c.UIDSearch(&imap.SearchCriteria{Header: []imap.SearchCriteriaHeaderField{h}}, nil).Wait()
	return err
}

// body is UID FETCH (UID RFC822.SIZE BODY.PEEK[]) of one whole message
// [§6.4.5], preferring a large one (see fetchTarget): a client opening a
// message with its attachments. The body is read and thrown away as it
// arrives, so a large message costs the producer no memory.
func (s *session) body() error {
	set, uid, ok := s.fetchTarget(true)
	if !ok {
		return errEmptyMailbox
	}
	return s.fetchDrained(set, uid, bodyFetchOptions)
}

// fetchDrained runs a FETCH of set with opts, reading each message as it
// arrives and discarding its literals (see drain): go-imap's Collect would
// copy every literal into a buffer first, which a load generator does not
// need. It learns the UIDs and sizes seen, and forgets uid (the one asked
// for, 0 for a sequence number) when the server sent nothing: another
// session expunged it meanwhile.
func (s *session) fetchDrained(set imap.NumSet, uid imap.UID, opts *imap.FetchOptions) error {
	cmd := s.c.Fetch(set, opts)
	seen := false
	for m := cmd.Next(); m != nil; m = cmd.Next() {
		seen = true
		s.learn(drain(m))
	}
	if err := cmd.Close(); err != nil {
		return err
	}
	if uid != 0 && !seen {
		s.forget(uid)
	}
	return nil
}

// drain reads one message of a body FETCH, discarding its body, and returns
// its UID and size.
func drain(m *imapclient.FetchMessageData) (uid imap.UID, size int64) {
	for item := m.Next(); item != nil; item = m.Next() {
		switch it := item.(type) {
		case imapclient.FetchItemDataUID:
			uid = it.UID
		case imapclient.FetchItemDataRFC822Size:
			size = it.Size
		case imapclient.FetchItemDataBodySection:
			if it.Literal != nil {
				_, _ = io.Copy(io.Discard, it.Literal)
			}
		}
	}
	return uid, size
}
