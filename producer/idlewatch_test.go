package producer

import (
	"bufio"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

func TestExistsAndMessageID(t *testing.T) {
	for _, tc := range []struct {
		line string
		n    uint64
		ok   bool
	}{
		{"* 17 EXISTS", 17, true}, {"* 17 exists", 17, true}, {"* 3 RECENT", 0, false},
		{"* OK [UIDNEXT 9] next", 0, false}, {"h1 OK done", 0, false}, {"* x EXISTS", 0, false},
	} {
		if n, ok := existsCount([]byte(tc.line)); n != tc.n || ok != tc.ok {
			t.Errorf("existsCount(%q) = %d, %v; want %d, %v", tc.line, n, ok, tc.n, tc.ok)
		}
	}
	resp := "* 6 FETCH (UID 42 BODY[HEADER.FIELDS (MESSAGE-ID)] {40}\r\nMessage-ID: <a.1.p1@deliver.invalid>\r\n\r\n)"
	if id := messageID([]byte(resp)); id != "a.1.p1@deliver.invalid" {
		t.Errorf("messageID() = %q, want a.1.p1@deliver.invalid", id)
	}
	if id := messageID([]byte("* 6 FETCH (UID 42 BODY[HEADER.FIELDS (MESSAGE-ID)] {2}\r\n\r\n)")); id != "" {
		t.Errorf("messageID() of a message without one = %q, want \"\"", id)
	}
	if uid, ok := numberAfter([]byte(resp), "UID "); uid != 42 || !ok {
		t.Errorf("numberAfter(UID) = %d, %v; want 42, true", uid, ok)
	}
}

// TestFetchNew: on an EXISTS a watching held connection ends IDLE, fetches
// the Message-IDs from UIDNEXT on, skips the old message a range past the
// last UID returns, hands on each new one with the time of the EXISTS that
// announced it, and idles again.
func TestFetchNew(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	c := &idleConn{conn: client, tag: 3, uidNext: 40}
	done := make(chan []string)
	go func() {
		r := bufio.NewReader(server)
		var got []string
		reply := func(s string) { server.Write([]byte(s)) }
		for _, answer := range []func(string){
			func(string) { reply("h3 OK IDLE done\r\n") }, // after DONE
			func(string) {
				reply("* 5 FETCH (UID 39 BODY[HEADER.FIELDS (MESSAGE-ID)] {23}\r\nMessage-ID: <old@x>\r\n\r\n)\r\n")
				reply("* 6 EXISTS\r\n")
				reply("* 6 FETCH (UID 41 BODY[HEADER.FIELDS (MESSAGE-ID)] {23}\r\nMessage-ID: <new@x>\r\n\r\n)\r\n")
				reply("h4 OK FETCH done\r\n")
			},
			func(string) { reply("+ idling\r\n") },
		} {
			line, _ := r.ReadString('\n')
			got = append(got, strings.TrimSpace(line))
			answer(line)
		}
		done <- got
	}()
	first := existsAt{n: 6, at: time.Unix(100, 0)}
	var ids []string
	var ats []time.Time
	err := c.fetchNew(first, 5*time.Second, func(id string, at time.Time) { ids, ats = append(ids, id), append(ats, at) })
	if err != nil {
		t.Fatalf("fetchNew() error = %v", err)
	}
	sent := <-done
	want := []string{"DONE", "h4 UID FETCH 40:*" + fetchNewCmd, "h5 IDLE"}
	if strings.Join(sent, "|") != strings.Join(want, "|") {
		t.Errorf("fetchNew() sent %q, want %q", sent, want)
	}
	if len(ids) != 1 || ids[0] != "new@x" || !ats[0].Equal(first.at) || c.uidNext != 42 {
		t.Errorf("fetchNew() saw %v at %v, UIDNEXT %d; want [new@x] at the first EXISTS, UIDNEXT 42", ids, ats, c.uidNext)
	}
}

// TestInboxWatch: a watched delivery seen records its time to inbox; one
// seen twice by one connection is a duplicate (by another connection of
// the account, not); one never seen is missing after the timeout; one to
// an account without a held connection is not watched.
func TestInboxWatch(t *testing.T) {
	start := time.Now().Add(-time.Minute)
	tl := timeline{start: start, warmup: 0, duration: time.Hour}
	rec := recorder.New("r1", 1, "p1", messages.StepInfo{}, &recorder.Options{Seed: 1})
	env := newSessionEnv(&config{}, tl, rec, slog.New(slog.DiscardHandler), 1)
	w := newInboxWatch(env, 10*time.Second)
	w.up("u1")
	a, b := &idleConn{}, &idleConn{}
	now := time.Now()
	if w.expect("x", "u2", now, now) {
		t.Error("expect() on an account without a held connection = true, want false")
	}
	if !w.expect("m1", "u1", now, now) || !w.expect("m2", "u1", now, now) {
		t.Fatal("expect() on a held account = false, want true")
	}
	w.sighted(a, "m1", now.Add(30*time.Millisecond))
	w.sighted(b, "m1", now.Add(31*time.Millisecond))
	w.sighted(a, "m1", now.Add(40*time.Millisecond))
	w.sighted(a, "someone-else's", now)
	w.expire(now.Add(11 * time.Second))
	batch := rec.Cut(0, time.Second, true, messages.Health{})
	if want := (messages.Arrivals{Seen: 1, Missing: 1, Duplicates: 1}); batch.Arrivals != want {
		t.Errorf("arrivals = %+v, want %+v", batch.Arrivals, want)
	}
	inbox := batch.PhaseStats(messages.Inbox)
	if inbox == nil || inbox.Succeeded != 1 || inbox.Attempted != 2 || len(inbox.Errors) != 1 ||
		!strings.Contains(inbox.Errors[0].Example, "never seen on the held IDLE connection within 10s") {
		t.Errorf("phase inbox = %+v, want 1 seen and 1 never seen within 10s", inbox)
	}
}
