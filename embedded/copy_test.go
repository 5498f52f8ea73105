package embedded_test

import (
	"errors"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/imapload/imapload/embedded"
)

// TestCopyOfExpungedMessage: a COPY of a message that another session of
// the same account expunged meanwhile answers as a real server does —
// UID COPY is OK without COPYUID (RFC 9051 §6.4.9), COPY by sequence
// number is NO [EXPUNGEISSUED] — never "OK [COPYUID 1  ]", which go-imap's
// client cannot parse (TestProfiles failed about 1 run in 7 on it). The
// order of the two sessions' commands is fixed, so this needs no race.
func TestCopyOfExpungedMessage(t *testing.T) {
	s := startIMAP(t, &embedded.IMAPOptions{Users: 1})
	user := embedded.UserName(1)
	a, b := login(t, s, user), login(t, s, user)
	if err := a.Create("Archive", nil).Wait(); err != nil {
		t.Fatalf("Create(Archive) error = %v", err)
	}
	for _, c := range []*imapclient.Client{a, b} {
		if _, err := c.Select("INBOX", nil).Wait(); err != nil {
			t.Fatalf("Select(INBOX) error = %v", err)
		}
	}
	uid := appendMsg(t, b, []byte("Subject: gone\r\n\r\nsoon expunged\r\n"))
	if err := a.Noop().Wait(); err != nil { // a learns the new message's sequence number
		t.Fatal(err)
	}
	expunge(t, b, uid)

	data, err := a.Copy(imap.UIDSetNum(uid), "Archive").Wait()
	if err != nil || data != nil && (len(data.SourceUIDs) > 0 || len(data.DestUIDs) > 0) {
		t.Errorf("UID COPY of an expunged message = %+v, %v; want OK without COPYUID", data, err)
	}
	// a has not been told of the expunge: message 6 is still its view's last.
	_, err = a.Copy(imap.SeqSetNum(6), "Archive").Wait()
	var ie *imap.Error
	if !errors.As(err, &ie) || ie.Type != imap.StatusResponseTypeNo || ie.Code != "EXPUNGEISSUED" {
		t.Errorf("COPY 6 of an expunged message error = %v; want NO [EXPUNGEISSUED]", err)
	}
	if data, err := a.Copy(imap.SeqSetNum(1), "Archive").Wait(); err != nil || len(data.SourceUIDs) != 1 {
		t.Errorf("COPY 1 of a message still there = %+v, %v; want its COPYUID", data, err)
	}
}

// expunge deletes the message uid of the selected mailbox.
func expunge(t *testing.T, c *imapclient.Client, uid imap.UID) {
	t.Helper()
	del := &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}
	if err := c.Store(imap.UIDSetNum(uid), del, nil).Close(); err != nil {
		t.Fatalf("Store(+\\Deleted) error = %v", err)
	}
	if err := c.UIDExpunge(imap.UIDSetNum(uid)).Close(); err != nil {
		t.Fatalf("UIDExpunge(%d) error = %v", uid, err)
	}
}
