package producer

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/imapload/imapload/internal/opguard"
)

// Push latency (RFC 2177 IDLE). A session cannot APPEND while it idles, so
// each session that runs the idle phase keeps a second connection, the
// pusher: dialed and logged in as the session's account when first needed,
// reused, and closed with the session. The pusher's dial and LOGIN are not
// recorded as phases dial and login; their failure is the IDLE's.

// errIdleClosed is an IDLE whose connection closed before the EXISTS came.
var errIdleClosed = errors.New("connection closed during IDLE")

// pushWatch is armed while a session idles: the connection's reader closes
// done at the first untagged EXISTS, noting when it came.
type pushWatch struct {
	at   time.Time
	done chan struct{}
}

// existsSeen fires the armed watch, if any. It runs on the reader goroutine.
func (s *session) existsSeen() {
	if w := s.pushed.Swap(nil); w != nil {
		w.at = time.Now()
		close(w.done)
	}
}

// idleCommand connects the pusher if need be, then runs idle with the
// operation timeout over both connections.
func (s *session) idleCommand() (out outcome, err error) {
	if err := s.dialPusher(); err != nil {
		return out, err
	}
	op := func() (err error) { out.from, out.to, err = s.idle(); return err }
	return out, blame(opguard.Run(closers{s.c, s.pusher}, s.env.cfg.OpTimeout, op))
}

// idle is IDLE on the session's connection, an APPEND to INBOX on the
// pusher, the wait for the first untagged EXISTS on the idling connection,
// then DONE. It returns the measured span: from just before the pusher sends
// the APPEND to the EXISTS's arrival. That is push latency as a user sees
// it: the server's APPEND and its notice to the other connection (plus the
// loopback's transit), without the IDLE and DONE round trips. An EXISTS that
// another session's APPEND to the same INBOX caused after the send counts
// too. The message appended is imapload's own (MOVE and EXPUNGE may take it).
func (s *session) idle() (from, to time.Time, err error) {
	cmd, err := s.c.Idle()
	if err != nil {
		return from, to, err
	}
	w := &pushWatch{done: make(chan struct{})}
	s.pushed.Store(w)
	from = time.Now()
	uid, _, err := appendTo(s.pusher, s.newMessage())
	if err == nil {
		select {
		case <-w.done:
			to = w.at
		case <-s.c.Closed():
			err = errIdleClosed
		}
	}
	s.pushed.Store(nil)
	if cerr := cmd.Close(); err == nil { // DONE
		err = cerr
	}
	if werr := cmd.Wait(); err == nil {
		err = werr
	}
	s.learn(uid, 0)
	s.appended(uid)
	return from, to, err
}

// dialPusher connects the pusher unless it is connected: dial and LOGIN as
// the session's account, each within the operation timeout.
func (s *session) dialPusher() error {
	if s.pusher != nil && !isClosed(s.pusher) {
		return nil
	}
	s.closePusher()
	c, _, err := s.dial(context.Background(), &imapclient.Options{})
	if err != nil {
		return err
	}
	if err := opguard.Run(c, s.env.cfg.OpTimeout, s.login(c, s.env.pool.account(s.acct))); err != nil {
		c.Close()
		return err
	}
	s.pusher = c
	return nil
}

func (s *session) closePusher() {
	if s.pusher != nil {
		s.pusher.Close()
		s.pusher = nil
	}
}

// appendTo APPENDs raw to INBOX on c [§6.3.12] and returns the new
// message's UID from the APPENDUID response code (RFC 4315, part of
// IMAP4rev2), 0 when the server does not say.
func appendTo(c *imapclient.Client, raw []byte) (imap.UID, []byte, error) {
	cmd := c.Append("INBOX", int64(len(raw)), nil)
	if _, err := cmd.Write(raw); err != nil {
		cmd.Close()
		return 0, nil, err
	}
	if err := cmd.Close(); err != nil {
		return 0, nil, err
	}
	data, err := cmd.Wait()
	if err != nil {
		return 0, nil, err
	}
	return data.UID, raw, nil
}

// closers closes several connections as one (for opguard.Run).
type closers []io.Closer

// Close closes each; it reports no error (a guard's close is best effort).
func (cs closers) Close() error {
	for _, c := range cs {
		c.Close()
	}
	return nil
}

// isClosed reports whether c's connection has gone.
func isClosed(c *imapclient.Client) bool {
	select {
	case <-c.Closed():
		return true
	default:
		return false
	}
}
