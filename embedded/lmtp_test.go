package embedded_test

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-smtp"

	"github.com/imapload/imapload/embedded"
)

// lmtpDeliver delivers msg to rcpts over one LMTP connection and returns
// the per-recipient replies of those RCPT accepted, and the RCPT errors.
func lmtpDeliver(t *testing.T, addr string, rcpts []string, msg string) (map[string]*smtp.DataResponse, map[string]error) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("Dial(%s) error = %v", addr, err)
	}
	c := smtp.NewClientLMTP(conn)
	defer c.Close()
	if err := c.Hello("localhost"); err != nil {
		t.Fatalf("LHLO error = %v", err)
	}
	if err := c.Mail("sender@example.org", nil); err != nil {
		t.Fatalf("MAIL error = %v", err)
	}
	refused := map[string]error{}
	for _, r := range rcpts {
		if err := c.Rcpt(r, nil); err != nil {
			refused[r] = err
		}
	}
	w, err := c.Data()
	if err != nil {
		t.Fatalf("DATA error = %v", err)
	}
	if _, err := w.Write([]byte(msg)); err != nil {
		t.Fatalf("DATA write error = %v", err)
	}
	replies, err := w.CloseWithLMTPResponse()
	var lerr smtp.LMTPDataError
	if err != nil && !errors.As(err, &lerr) {
		t.Fatalf("end of DATA error = %v", err)
	}
	if err := c.Quit(); err != nil {
		t.Errorf("QUIT error = %v", err)
	}
	return replies, refused
}

// TestLMTPDeliversToInbox: a message delivered by LMTP lands in its
// recipient's INBOX, once, an IDLE session there sees the EXISTS, and an
// unknown recipient is refused at RCPT with 550 (RFC 2033 §4.2).
func TestLMTPDeliversToInbox(t *testing.T) {
	s := startIMAP(t, &embedded.IMAPOptions{LMTPAddr: "127.0.0.1:0"})
	idler, exists := inboxWatcher(t, s, s.UserName(1), 4)
	idle, err := idler.Idle()
	if err != nil {
		t.Fatalf("Idle() error = %v", err)
	}
	msg := "From: a@example.org\r\nTo: user1@example.org\r\nSubject: delivered\r\nMessage-ID: <lmtp-1@imapload>\r\n\r\nhello\r\n"
	replies, refused := lmtpDeliver(t, s.LMTPAddr(), []string{s.UserName(1) + "@example.org", "nosuch@example.org"}, msg)
	if r := replies[s.UserName(1)+"@example.org"]; r == nil {
		t.Errorf("LMTP replies = %v, want a 2xx one for %s", replies, s.UserName(1))
	}
	var se *smtp.SMTPError
	if err := refused["nosuch@example.org"]; !errors.As(err, &se) || se.Code != 550 {
		t.Errorf("RCPT nosuch error = %v, want 550", err)
	}
	select {
	case n := <-exists:
		if n != 6 {
			t.Errorf("EXISTS %d, want 6 (5 seeded + 1 delivered)", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no EXISTS within 5 s of the delivery")
	}
	if err := idle.Close(); err != nil {
		t.Fatalf("IDLE Close() error = %v", err)
	}
	if err := idle.Wait(); err != nil {
		t.Fatalf("IDLE Wait() error = %v", err)
	}
	hdr := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierHeader, HeaderFields: []string{"Message-ID"}, Peek: true}
	got, err := idler.Fetch(imap.SeqSetNum(1, 2, 3, 4, 5, 6), &imap.FetchOptions{BodySection: []*imap.FetchItemBodySection{hdr}}).Collect()
	if err != nil {
		t.Fatalf("Fetch() error = %v", err)
	}
	n := 0
	for _, m := range got {
		if strings.Contains(string(m.FindBodySection(hdr)), "<lmtp-1@imapload>") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("INBOX holds the delivered Message-ID %d times, want 1", n)
	}
	if st := s.Stats(); st.Delivered != 1 {
		t.Errorf("Stats().Delivered = %d, want 1", st.Delivered)
	}
}

// TestLMTPDeliveryPool: with one delivery worker of 150 ms, three
// deliveries sent at once are served one after another, so the last ends
// no sooner than 450 ms after they were sent (a lower bound only timers
// set, which a busy machine can only lengthen).
func TestLMTPDeliveryPool(t *testing.T) {
	const service = 150 * time.Millisecond
	s := startIMAP(t, &embedded.IMAPOptions{LMTPAddr: "127.0.0.1:0", DeliverWorkers: 1, DeliverServiceTime: service})
	if got := s.DeliverCapacity(); got < 6.66 || got > 6.67 {
		t.Errorf("DeliverCapacity() = %v, want 6.67 (1 / 150 ms)", got)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			msg := fmt.Sprintf("Subject: pool %d\r\nMessage-ID: <pool-%d@imapload>\r\n\r\nhi\r\n", i, i)
			lmtpDeliver(t, s.LMTPAddr(), []string{s.UserName(2) + "@example.org"}, msg)
		})
	}
	wg.Wait()
	if took := time.Since(start); took < 3*service {
		t.Errorf("three deliveries through one 150 ms worker took %v, want at least %v", took, 3*service)
	}
	if st := s.Stats(); st.Delivered != 3 {
		t.Errorf("Stats().Delivered = %d, want 3", st.Delivered)
	}
}

func TestLMTPOptionsRefused(t *testing.T) {
	_, err := embedded.StartIMAP(&embedded.IMAPOptions{LMTPAddr: "127.0.0.1:0", DeliverWorkers: -1})
	if !errors.Is(err, embedded.ErrBadOption) {
		t.Errorf("StartIMAP(DeliverWorkers -1) error = %v, want ErrBadOption", err)
	}
	s := startIMAP(t, nil)
	if a := s.LMTPAddr(); a != "" {
		t.Errorf("LMTPAddr() without LMTPAddr = %q, want \"\"", a)
	}
}
