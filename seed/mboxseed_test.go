package seed_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/seed"
)

// TestSeedMboxRoundTrip: messages from an mbox reach the server byte for
// byte (FETCH BODY[]), in the file's order, cycled to fill the folder.
func TestSeedMboxRoundTrip(t *testing.T) {
	msgs := []string{
		"Subject: one\r\nDate: Mon, 01 Jan 2024 10:00:00 +0000\r\n\r\nFrom the start of a line\r\n",
		"Subject: two\r\n\r\n>From quoted\r\n\r\n",
	}
	mbox := "From a@example.org Mon Jan  1 10:00:00 2024\nSubject: one\nDate: Mon, 01 Jan 2024 10:00:00 +0000\n\n>From the start of a line\n\n" +
		"From b@example.org Mon Jan  1 11:00:00 2024\nSubject: two\n\n>>From quoted\n\n\n"
	path := filepath.Join(t.TempDir(), "in.mbox")
	if err := os.WriteFile(path, []byte(mbox), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := seed.OpenMbox(path, 0)
	if err != nil {
		t.Fatalf("OpenMbox() error = %v", err)
	}
	defer src.Close()
	s := startIMAP(t, &embedded.IMAPOptions{Users: 1, SeedMessages: -1})
	o := seed.Options{Addr: s.Addr(), Accounts: accounts(s, 1), Targets: []seed.Target{{Folder: "Imported", Count: 5}}, Source: src}
	if sum, err := run(t, t.Context(), o); err != nil || sum.Messages != 5 {
		t.Fatalf("Run() = %+v, %v; want 5 messages", sum, err)
	}
	got := fetchBodies(t, s.Addr(), o.Accounts[0], "Imported")
	if len(got) != 5 {
		t.Fatalf("Imported holds %d messages, want 5", len(got))
	}
	for i, b := range got {
		if want := msgs[i%2]; !bytes.Equal(b, []byte(want)) {
			t.Errorf("message %d = %q, want %q", i+1, b, want)
		}
	}
}

func fetchBodies(t *testing.T, addr string, a seed.Account, folder string) [][]byte {
	t.Helper()
	c, err := imapclient.DialInsecure(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login(a.User, a.Password).Wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Select(folder, nil).Wait(); err != nil {
		t.Fatal(err)
	}
	section := &imap.FetchItemBodySection{Peek: true}
	msgs, err := c.Fetch(imap.SeqSet{{Start: 1, Stop: 0}}, &imap.FetchOptions{BodySection: []*imap.FetchItemBodySection{section}}).Collect()
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, len(msgs))
	for i, m := range msgs {
		out[i] = m.FindBodySection(section)
	}
	return out
}
