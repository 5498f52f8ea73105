package seed_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/seed"
)

// testSizes keeps test messages small: a few KiB, some with attachments.
const testSizes = "1k-4k:80,32k-48k:20"

func startIMAP(t *testing.T, o *embedded.IMAPOptions) *embedded.IMAP {
	t.Helper()
	s, err := embedded.StartIMAP(o)
	if err != nil {
		t.Fatalf("embedded.StartIMAP() error = %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func accounts(s *embedded.IMAP, n int) []seed.Account {
	as := make([]seed.Account, n)
	for i := range as {
		as[i] = seed.Account{User: s.UserName(i + 1), Password: s.Password()}
	}
	return as
}

func generator(t *testing.T) *seed.Generator {
	t.Helper()
	tab, err := seed.ParseSizes(testSizes)
	if err != nil {
		t.Fatal(err)
	}
	return &seed.Generator{Sizes: tab, Seed: 1, Now: time.Now(), Days: 90}
}

func targets(t *testing.T, folders string, messages int) []seed.Target {
	t.Helper()
	fs, err := seed.ParseFolders(folders)
	if err != nil {
		t.Fatal(err)
	}
	return fs.Targets(messages)
}

func run(t *testing.T, ctx context.Context, o seed.Options) (seed.Summary, error) {
	t.Helper()
	s, err := seed.New(o)
	if err != nil {
		t.Fatalf("seed.New() error = %v", err)
	}
	return s.Run(ctx)
}

// status returns how many messages each folder of user holds.
func status(t *testing.T, addr, user, password string, folders []seed.Target) map[string]int {
	t.Helper()
	c, err := imapclient.DialInsecure(addr, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer c.Close()
	if err := c.Login(user, password).Wait(); err != nil {
		t.Fatalf("login %s: %v", user, err)
	}
	got := map[string]int{}
	for _, f := range folders {
		st, err := c.Status(f.Folder, &imap.StatusOptions{NumMessages: true}).Wait()
		if err != nil {
			t.Fatalf("STATUS %s of %s: %v", f.Folder, user, err)
		}
		got[f.Folder] = int(*st.NumMessages)
	}
	return got
}

func checkTargets(t *testing.T, s *embedded.IMAP, accts []seed.Account, ts []seed.Target) {
	t.Helper()
	for _, a := range accts {
		got := status(t, s.Addr(), a.User, a.Password, ts)
		for _, tg := range ts {
			if got[tg.Folder] != tg.Count {
				t.Errorf("%s %s holds %d messages, want %d", a.User, tg.Folder, got[tg.Folder], tg.Count)
			}
		}
	}
}

// TestSeedTargetsThenNothing: a run fills every folder to its target
// (INBOX counts the server's 5 seed messages, the others are created), and
// a second run appends nothing and finds every account full.
func TestSeedTargetsThenNothing(t *testing.T) {
	s := startIMAP(t, &embedded.IMAPOptions{Users: 3})
	ts := targets(t, "INBOX:2,Archive:1,Sent=4", 24)
	o := seed.Options{Addr: s.Addr(), Accounts: accounts(s, 3), Targets: ts, Source: generator(t), Concurrency: 2, Pipeline: 4}
	sum, err := run(t, t.Context(), o)
	if err != nil {
		t.Fatalf("Run() error = %v, summary %+v", err, sum)
	}
	// 3 × (16 − 5 + 8 + 4) messages; Archive and Sent created in each account.
	if sum.Messages != 3*23 || sum.Created != 6 || sum.Done != 3 || sum.Full != 0 {
		t.Errorf("first Run() = %+v, want 69 messages, 6 folders created, 3 done", sum.Stats)
	}
	checkTargets(t, s, o.Accounts, ts)

	sum, err = run(t, t.Context(), o)
	if err != nil || sum.Messages != 0 || sum.Bytes != 0 || sum.Full != 3 || sum.Created != 0 {
		t.Errorf("second Run() = %+v, %v; want nothing appended, 3 accounts full", sum.Stats, err)
	}
}

// cancelAfter is a source that cancels the run after n messages.
type cancelAfter struct {
	seed.Source
	n      int64
	calls  atomic.Int64
	cancel context.CancelFunc
}

func (c *cancelAfter) Message(k seed.Key) (seed.Message, error) {
	if c.calls.Add(1) == c.n {
		c.cancel()
	}
	return c.Source.Message(k)
}

// TestSeedResumes: a run interrupted part way returns ErrInterrupted with
// what it did; a second run appends the rest, and the folders then hold
// exactly the messages of an uninterrupted run (Message-IDs of indexes 0
// to n-1, none twice).
func TestSeedResumes(t *testing.T) {
	s := startIMAP(t, &embedded.IMAPOptions{Users: 2, SeedMessages: -1})
	ts := targets(t, "INBOX,Archive", 20)
	gen := generator(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	o := seed.Options{Addr: s.Addr(), Accounts: accounts(s, 2), Targets: ts, Concurrency: 1, Pipeline: 3,
		Source: &cancelAfter{Source: gen, n: 15, cancel: cancel}}
	sum, err := run(t, ctx, o)
	if !errors.Is(err, seed.ErrInterrupted) || !sum.Interrupted || sum.Messages != 14 && sum.Messages != 15 {
		t.Fatalf("interrupted Run() = %+v, %v; want ErrInterrupted after 14 or 15 messages", sum, err)
	}
	first := sum.Messages
	o.Source = gen
	sum, err = run(t, t.Context(), o)
	if err != nil || sum.Messages != 40-first || sum.Done != 2 {
		t.Fatalf("resumed Run() = %+v, %v; want the other %d messages, 2 accounts done", sum, err, 40-first)
	}
	checkTargets(t, s, o.Accounts, ts)
	for _, a := range o.Accounts {
		checkMessageIDs(t, s, a, ts, gen)
	}
}

// checkMessageIDs checks that each folder holds the generator's messages
// 0 to n-1, once each.
func checkMessageIDs(t *testing.T, s *embedded.IMAP, a seed.Account, ts []seed.Target, gen seed.Source) {
	t.Helper()
	c, err := imapclient.DialInsecure(s.Addr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login(a.User, a.Password).Wait(); err != nil {
		t.Fatal(err)
	}
	for _, tg := range ts {
		if _, err := c.Select(tg.Folder, nil).Wait(); err != nil {
			t.Fatal(err)
		}
		msgs, err := c.Fetch(imap.SeqSet{{Start: 1, Stop: 0}}, &imap.FetchOptions{Envelope: true}).Collect()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, m := range msgs {
			got[m.Envelope.MessageID] = true
		}
		for i := range tg.Count {
			m, _ := gen.Message(seed.Key{Account: a.User, Folder: tg.Folder, Index: i})
			id := messageID(string(m.Body))
			if !got[id] {
				t.Errorf("%s %s lacks message %d (%s)", a.User, tg.Folder, i, id)
			}
		}
		if len(msgs) != tg.Count || len(got) != tg.Count {
			t.Errorf("%s %s: %d messages, %d Message-IDs, want %d", a.User, tg.Folder, len(msgs), len(got), tg.Count)
		}
	}
}

func messageID(msg string) string {
	_, rest, _ := strings.Cut(msg, "Message-ID: <")
	id, _, _ := strings.Cut(rest, ">")
	return id
}

// TestSeedErrorsGrouped: a wrong password is one error group naming a few
// users, never the password; the run gives up after GiveUpAfter failures.
func TestSeedErrorsGrouped(t *testing.T) {
	s := startIMAP(t, &embedded.IMAPOptions{Users: 20})
	accts := accounts(s, 20)
	for i := range accts {
		accts[i].Password = "wrong-Pa55word"
	}
	o := seed.Options{Addr: s.Addr(), Accounts: accts, Targets: targets(t, "INBOX", 10), Source: generator(t),
		Concurrency: 2, GiveUpAfter: 4}
	sum, err := run(t, t.Context(), o)
	if !errors.Is(err, seed.ErrAccounts) || !sum.GaveUp || len(sum.Errors) != 1 {
		t.Fatalf("Run() = %+v, %v; want ErrAccounts, given up, one error group", sum, err)
	}
	g := sum.Errors[0]
	if g.Accounts < 4 || g.Accounts > 6 || len(g.Examples) != 3 || !strings.Contains(g.Err, "login") ||
		strings.Contains(g.Err, "Pa55word") {
		t.Errorf("error group %+v: want 4–5 accounts, 3 examples, a login error without the password", g)
	}
}

// TestSeedUnreachable: a server that is not there fails every account
// with one connection error, quickly.
func TestSeedUnreachable(t *testing.T) {
	s := startIMAP(t, nil)
	addr := s.Addr()
	s.Close()
	o := seed.Options{Addr: addr, Accounts: accounts(s, 30), Targets: targets(t, "INBOX", 1), Source: generator(t)}
	sum, err := run(t, t.Context(), o)
	if !errors.Is(err, seed.ErrAccounts) || len(sum.Errors) != 1 || !strings.Contains(sum.Errors[0].Err, "connect to "+addr) {
		t.Fatalf("Run() = %+v, %v; want one connection error group", sum, err)
	}
}

func TestNewBadOptions(t *testing.T) {
	good := seed.Options{Addr: "127.0.0.1:1", Accounts: []seed.Account{{"u", "p"}},
		Targets: []seed.Target{{"INBOX", 1}}, Source: &seed.Generator{}}
	for _, tt := range []struct {
		name string
		edit func(*seed.Options)
	}{
		{"no address", func(o *seed.Options) { o.Addr = "" }},
		{"no accounts", func(o *seed.Options) { o.Accounts = nil }},
		{"no source", func(o *seed.Options) { o.Source = nil }},
		{"both TLS", func(o *seed.Options) { o.TLS, o.StartTLS = true, true }},
		{"bad local address", func(o *seed.Options) { o.LocalAddr = "here" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := good
			tt.edit(&o)
			if _, err := seed.New(o); !errors.Is(err, seed.ErrBadOptions) {
				t.Errorf("New() error = %v, want ErrBadOptions", err)
			}
		})
	}
}
