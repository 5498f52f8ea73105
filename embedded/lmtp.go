package embedded

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-smtp"
)

// Bounds of an LMTP delivery.
const (
	maxDeliveryBytes = 32 << 20
	maxRecipients    = 100
	lmtpTimeout      = time.Minute
)

// lmtpServer is the LMTP (RFC 2033) side of the test server: it stores
// each delivered message in its recipients' INBOXes through the same
// memory server the IMAP sessions read, so IDLE sessions on those INBOXes
// are told of it (EXISTS).
type lmtpServer struct {
	srv  *smtp.Server
	ln   net.Listener
	gate *gate // the delivery pool (DeliverWorkers, DeliverServiceTime)
	done chan struct{}
}

// startLMTP listens on LMTPAddr and serves LMTP, when it is set.
func (s *IMAP) startLMTP() error {
	if s.opts.LMTPAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", s.opts.LMTPAddr)
	if err != nil {
		return fmt.Errorf("embedded: LMTP listen: %w", err)
	}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) {
		return &lmtpSession{s: s}, nil
	}))
	srv.LMTP, srv.Domain = true, "imapload-embedded"
	srv.MaxMessageBytes, srv.MaxRecipients = maxDeliveryBytes, maxRecipients
	srv.ReadTimeout, srv.WriteTimeout = lmtpTimeout, lmtpTimeout
	srv.ErrorLog = s.logger()
	pool := &IMAPOptions{Workers: s.opts.DeliverWorkers, ServiceTime: s.opts.DeliverServiceTime}
	s.lmtp = &lmtpServer{srv: srv, ln: ln, gate: newGate(pool, s.done), done: make(chan struct{})}
	go func() {
		defer close(s.lmtp.done)
		_ = srv.Serve(ln)
	}()
	return nil
}

// LMTPAddr returns the "ip:port" of the LMTP listener, "" without one.
func (s *IMAP) LMTPAddr() string {
	if s.lmtp == nil {
		return ""
	}
	return s.lmtp.ln.Addr().String()
}

// DeliverCapacity returns the most deliveries per second the delivery pool
// can serve, DeliverWorkers/DeliverServiceTime, or 0 when unlimited.
func (s *IMAP) DeliverCapacity() float64 {
	if s.opts.DeliverWorkers <= 0 || s.opts.DeliverServiceTime <= 0 {
		return 0
	}
	return float64(s.opts.DeliverWorkers) / s.opts.DeliverServiceTime.Seconds()
}

// closeLMTP stops the LMTP listener and its connections and waits for it.
func (s *IMAP) closeLMTP() error {
	if s.lmtp == nil {
		return nil
	}
	err := s.lmtp.srv.Close()
	<-s.lmtp.done
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("embedded: LMTP close: %w", err)
	}
	return nil
}

// lmtpSession is one LMTP transaction's state (go-smtp's Session).
type lmtpSession struct {
	s     *IMAP
	rcpts []string // as given to RCPT TO
	users []string // the accounts they name
}

var _ smtp.LMTPSession = (*lmtpSession)(nil)

func (ls *lmtpSession) Reset()                               { ls.rcpts, ls.users = nil, nil }
func (ls *lmtpSession) Logout() error                        { return nil }
func (ls *lmtpSession) Mail(string, *smtp.MailOptions) error { return nil }

// Rcpt accepts a seeded account, by name or by its local part.
func (ls *lmtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	name := to
	if _, ok := ls.s.users[name]; !ok {
		name, _, _ = strings.Cut(to, "@")
	}
	if _, ok := ls.s.users[name]; !ok {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"}
	}
	ls.rcpts, ls.users = append(ls.rcpts, to), append(ls.users, name)
	return nil
}

// Data is the single status of an SMTP transaction; over LMTP go-smtp
// calls LMTPData instead.
func (ls *lmtpSession) Data(r io.Reader) error {
	var first firstStatus
	if err := ls.LMTPData(r, &first); err != nil {
		return err
	}
	return first.err
}

// LMTPData stores the message for each recipient and sets each one's
// status (RFC 2033 §4.2): every delivery passes the command gate and then
// the delivery pool, and may be refused by NoFraction's fault.
func (ls *lmtpSession) LMTPData(r io.Reader, status smtp.StatusCollector) error {
	msg, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	for i, u := range ls.users {
		status.SetStatus(ls.rcpts[i], ls.s.deliver(u, msg))
	}
	return nil
}

// deliver stores msg in user's INBOX after its costs: a command slot, a
// delivery slot, a slow account's delay.
func (s *IMAP) deliver(user string, msg []byte) error {
	u := s.users[user]
	if err := s.gate.admit(nil, s.IsSlow(user), false); err != nil { // a delivery does not wear the server (DegradeFor)
		return tempFailure("server closing")
	}
	if err := s.lmtp.gate.admit(nil, false, false); err != nil {
		return tempFailure("server closing")
	}
	if s.faults.injectNo() {
		s.stats.noReplies.Add(1)
		return tempFailure("injected fault")
	}
	s.makeRoom(u, "INBOX")
	if _, err := u.Append("INBOX", bytes.NewReader(msg), &imap.AppendOptions{}); err != nil {
		return tempFailure(err.Error())
	}
	s.stats.delivered.Add(1)
	return nil
}

func tempFailure(msg string) error {
	return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: msg}
}

// firstStatus keeps the first failure (an SMTP transaction has one reply).
type firstStatus struct{ err error }

func (f *firstStatus) SetStatus(_ string, err error) {
	if f.err == nil {
		f.err = err
	}
}
