package seed

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-smtp"
)

// lmtpDomain is the domain of a recipient whose account name has none, as
// in the To: headers of generated mail; a server that maps addresses to
// accounts by their local part (Dovecot's auth_username_format = %Ln)
// drops it.
const lmtpDomain = "example.org"

// folderWriter puts one folder's missing messages in: by APPEND over the
// account's IMAP connection, or, for INBOX with Options.LMTPAddr, by LMTP
// delivery as mail arrives.
type folderWriter interface {
	send(m Message) error
	drain() error
	done() int // messages put in, answered OK
}

func (p *appender) done() int { return p.appended }

// writer returns the folderWriter of folder t for account a, and what
// closes it.
func (s *Seeder) writer(ctx context.Context, c *imapclient.Client, a Account, folder string) (folderWriter, func(), error) {
	if s.o.LMTPAddr == "" || !strings.EqualFold(folder, "INBOX") {
		return &appender{s: s, c: c, folder: folder}, func() {}, nil
	}
	d, err := s.dialLMTP(ctx, a)
	if err != nil {
		return nil, nil, err
	}
	return d, d.close, nil
}

// lmtpWriter delivers one account's INBOX messages over one LMTP
// connection (RFC 2033), a transaction each. The server gives each its
// own INTERNALDATE and no flags: Message.Date and Flags do not apply.
type lmtpWriter struct {
	s         *Seeder
	c         *smtp.Client
	conn      net.Conn
	rcpt      string
	delivered int
}

// dialLMTP connects to LMTPAddr and sends LHLO, within OpTimeout.
func (s *Seeder) dialLMTP(ctx context.Context, a Account) (*lmtpWriter, error) {
	d := net.Dialer{Timeout: s.o.OpTimeout, LocalAddr: s.localAddr}
	conn, err := d.DialContext(ctx, "tcp", s.o.LMTPAddr)
	if err != nil {
		return nil, fmt.Errorf("LMTP connect to %s: %w", s.o.LMTPAddr, err)
	}
	w := &lmtpWriter{s: s, c: smtp.NewClientLMTP(conn), conn: conn, rcpt: a.User}
	if !strings.Contains(a.User, "@") {
		w.rcpt += "@" + lmtpDomain
	}
	conn.SetDeadline(time.Now().Add(s.o.OpTimeout))
	if err := w.c.Hello("imapload-seed.invalid"); err != nil {
		w.c.Close()
		return nil, fmt.Errorf("LMTP LHLO to %s: %w", s.o.LMTPAddr, err)
	}
	return w, nil
}

// send delivers m to the account, waiting for its reply.
func (w *lmtpWriter) send(m Message) error {
	w.conn.SetDeadline(time.Now().Add(w.s.o.OpTimeout))
	err := w.c.SendMail("imapload-seed@imapload.invalid", []string{w.rcpt}, bytes.NewReader(m.Body))
	if err != nil {
		return fmt.Errorf("LMTP delivery to %s: %w", w.rcpt, err)
	}
	w.delivered++
	w.s.messages.Add(1)
	w.s.bytes.Add(int64(len(m.Body)))
	return nil
}

func (w *lmtpWriter) drain() error { return nil } // every delivery waits for its reply
func (w *lmtpWriter) done() int    { return w.delivered }

func (w *lmtpWriter) close() {
	w.conn.SetDeadline(time.Now().Add(logoutTimeout))
	_ = w.c.Quit()
	w.c.Close()
}
