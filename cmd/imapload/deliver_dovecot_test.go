package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// deliverIDSuffix ends the Message-ID of every message a producer delivers.
const deliverIDSuffix = "@deliver.imapload.invalid"

// TestRunDovecotDeliveries is issue 24's acceptance against a real server:
// `imapload run` on the private Dovecot with one step of reads (SELECT,
// FETCH, STATUS), an IDLE connection held on each of its 10 accounts, and
// 5 deliveries/s by LMTP to Dovecot's lmtp. Its result has the deliver
// phase, time to inbox (phase inbox), and deliveries that all arrived once
// on the held connections; the mailboxes, read over IMAP after the run,
// hold each delivered message once and at least as many as were accepted.
// The host's speed is not judged, only that its exit code is its verdict's.
func TestRunDovecotDeliveries(t *testing.T) {
	d := testkit.DovecotFromEnv(t, 10)
	lmtp := d.LMTPAddr(t)
	testkit.Require(t, testkit.Long)
	t.Parallel()
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte(d.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	users := make([]string, 10)
	for i := range users {
		users[i] = fmt.Sprintf("%s%d", d.Prefix, i+1)
	}
	before := deliveredIDs(t, d, users)
	dir := filepath.Join(t.TempDir(), "report")
	o := runOnce(t, []string{"TMPDIR=" + t.TempDir()}, 3*time.Minute, "run", "--producers", "1", "--imap", d.Addr, "--lmtp", lmtp,
		"--accounts-template", d.Prefix+"%d", "--accounts-count", "10", "--accounts-password-file", pw,
		"--connections", "10", "--rate", "20", "--deliver-rate", "5", "--mix", "select=1,fetch=2,status=1",
		"--step-duration", "4s", "--stagger", "1s", "--warmup", "8s", // every held connection up before the window, on a busy host too
		"--sessions", "4", "--saturation-lag", "1h", "--out", dir)
	checkRunEnd(t, o.stdout, codeErr(o.code), dir)
	r := readReport(t, filepath.Join(dir, "report.json"))
	if len(r.Steps) != 1 {
		t.Fatalf("run made %d steps, want 1", len(r.Steps))
	}
	s := r.Steps[0]
	checkDeliveries(t, s, 10)
	after := deliveredIDs(t, d, users)
	added := 0
	for id, n := range after {
		if _, old := before[id]; old {
			continue // an earlier run's (the bench's, another test's)
		}
		added++
		if n > 1 {
			t.Errorf("Message-ID %s is in its INBOX %d times, want once", id, n)
		}
	}
	if got, want := added, int(s.Deliveries.Accepted); got < want {
		t.Errorf("the INBOXes gained %d delivered messages, want at least the %d accepted in the window", got, want)
	}
	for _, want := range []string{"deliver", "inbox", "deliveries: ", "each arrived once"} {
		if !strings.Contains(o.stdout, want) {
			t.Errorf("run's output lacks %q", want)
		}
	}
}

// checkDeliveries: the step delivered (phase deliver), every delivery went
// to an account with a held connection (all are held) and arrived there
// once (phase inbox, one time to inbox per arrival).
func checkDeliveries(t *testing.T, s messages.StepResult, held int) {
	t.Helper()
	dl := s.Deliveries
	if dl == nil {
		t.Fatalf("step %d has no deliveries", s.Step)
	}
	if c := s.Connections; c == nil || c.Held != uint64(held) {
		t.Errorf("step %d connections = %+v, want %d held", s.Step, c, held)
	}
	deliver, inbox := s.Phases[messages.Deliver.String()], s.Phases[messages.Inbox.String()]
	if dl.Accepted == 0 || deliver.Count == 0 || deliver.P50 <= 0 {
		t.Errorf("step %d: %d deliveries accepted, phase deliver %+v; want some, timed", s.Step, dl.Accepted, deliver)
	}
	if dl.Watched != dl.Accepted || dl.Seen != dl.Watched || !dl.Intact() {
		t.Errorf("step %d deliveries = %+v: want every accepted one watched and seen once", s.Step, *dl)
	}
	if inbox.Count != dl.Seen || inbox.P50 <= 0 {
		t.Errorf("step %d phase inbox: %d times to inbox (P50 %v ms) for %d seen; want one per arrival", s.Step, inbox.Count, inbox.P50, dl.Seen)
	}
}

// deliveredIDs counts, over the accounts' INBOXes, the messages a producer
// delivered, by Message-ID.
func deliveredIDs(t *testing.T, d testkit.DovecotEnv, users []string) map[string]int {
	t.Helper()
	ids := map[string]int{}
	for _, u := range users {
		c, err := imapclient.DialInsecure(d.Addr, nil)
		if err != nil {
			t.Fatalf("dial %s: %v", d.Addr, err)
		}
		if err := c.Login(u, d.Password).Wait(); err != nil {
			t.Fatalf("LOGIN %s: %v", u, err)
		}
		if _, err := c.Select("INBOX", nil).Wait(); err != nil {
			t.Fatalf("SELECT INBOX of %s: %v", u, err)
		}
		crit := &imap.SearchCriteria{Header: []imap.SearchCriteriaHeaderField{{Key: "Message-ID", Value: deliverIDSuffix}}}
		found, err := c.Search(crit, nil).Wait()
		if err != nil {
			t.Fatalf("SEARCH of %s: %v", u, err)
		}
		if seq := found.All; seq != nil && len(found.AllSeqNums()) > 0 {
			msgs, err := c.Fetch(seq, &imap.FetchOptions{Envelope: true}).Collect()
			if err != nil {
				t.Fatalf("FETCH ENVELOPE of %s: %v", u, err)
			}
			for _, m := range msgs {
				ids[m.Envelope.MessageID]++
			}
		}
		c.Logout().Wait()
		c.Close()
	}
	return ids
}

// TestDemoDeliveryBottleneck: `imapload demo` whose embedded server
// delivers 5 messages/s (1 worker × 200 ms) under an offer of 20/s beside
// 100 commands/s that it serves: the one step is below on its deliveries,
// the run held none and its reason names the deliveries, and the process
// exits with that verdict's code (6).
func TestDemoDeliveryBottleneck(t *testing.T) {
	testkit.Require(t, testkit.Long)
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "report")
	o := runOnce(t, []string{"TMPDIR=" + t.TempDir()}, 2*time.Minute, "demo", "--connections", "10", "--rate", "100",
		"--deliver-rate", "20", "--deliver-workers", "1", "--deliver-service-time", "200ms", "--deliver-conns", "4",
		"--step-duration", "3s", "--stagger", "1s", "--warmup", "4s", "--saturation-lag", "1h", "--out", dir)
	checkRunEnd(t, o.stdout, codeErr(o.code), dir)
	r := readReport(t, filepath.Join(dir, "report.json"))
	// The held connections are set up in the warm-up; on a busy host some
	// may still be logging in when the window opens, and the step is then
	// below on them too. Deliveries must be named whatever else is.
	if len(r.Steps) != 1 || !strings.Contains(r.Steps[0].Below, "deliveries: ") {
		t.Fatalf("steps %+v: want one, below on its deliveries", r.Steps)
	}
	if o.code != verdict.ExitNoneHeld || r.Verdict != messages.RunNoneHeld || len(r.Reasons) == 0 ||
		!strings.Contains(r.Reasons[0].Detail, "deliveries: accepted") {
		t.Errorf("exit %d, verdict %q, reasons %+v: want %d, none held, naming the deliveries", o.code, r.Verdict, r.Reasons, verdict.ExitNoneHeld)
	}
}
