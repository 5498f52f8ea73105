package embedded_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/imapload/imapload/embedded"
)

func TestIMAPMaxMessages(t *testing.T) {
	tests := []struct {
		name        string
		maxMessages int
		appends     int
		want        uint32
	}{
		{name: "bounded", maxMessages: 5, appends: 20, want: 5},
		{name: "bound of one", maxMessages: 1, appends: 3, want: 1},
		{name: "under the bound", maxMessages: 100, appends: 3, want: 8},
		{name: "unbounded", maxMessages: -1, appends: 20, want: 25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startIMAP(t, &embedded.IMAPOptions{Users: 1, MaxMessages: tt.maxMessages})
			c := login(t, s, "user1")
			if _, err := c.Select("INBOX", nil).Wait(); err != nil {
				t.Fatalf("Select() error = %v", err)
			}
			var uids []imap.UID
			for i := range tt.appends {
				uids = append(uids, appendMsg(t, c, fmt.Appendf(nil, "Subject: %d\r\n\r\nbody\r\n", i)))
			}
			st, err := c.Status("INBOX", &imap.StatusOptions{NumMessages: true}).Wait()
			if err != nil {
				t.Fatalf("Status() error = %v", err)
			}
			if *st.NumMessages != tt.want {
				t.Errorf("Status().NumMessages = %d, want %d", *st.NumMessages, tt.want)
			}
			got := fetchUIDs(t, c)
			if newest := uids[max(0, len(uids)-int(tt.want)):]; !containsAll(got, newest) {
				t.Errorf("mailbox UIDs = %v, want the newest appends %v kept", got, newest)
			}
		})
	}
}

// fetchUIDs returns the UIDs of every message in the selected mailbox.
func fetchUIDs(t *testing.T, c *imapclient.Client) []imap.UID {
	t.Helper()
	all := imap.SeqSet{imap.SeqRange{Start: 1, Stop: 0}} // 1:*
	msgs, err := c.Fetch(all, &imap.FetchOptions{UID: true}).Collect()
	if err != nil {
		t.Fatalf("Fetch(1:*) error = %v", err)
	}
	uids := make([]imap.UID, len(msgs))
	for i, m := range msgs {
		uids[i] = m.UID
	}
	return uids
}

func containsAll(have, want []imap.UID) bool {
	for _, u := range want {
		if !slices.Contains(have, u) {
			return false
		}
	}
	return true
}
