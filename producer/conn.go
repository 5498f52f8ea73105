package producer

import (
	"net"
	"time"
)

// guardedConn is a session's connection as go-imap sees it: every call goes
// to the real connection except read deadlines, which are ignored.
//
// go-imap sets a 30 s read deadline before each response it reads and
// clears it after (twice more around each literal), so a FETCH moves the
// runtime's poller timer eight times and a SELECT about sixteen. The
// producer does not need them: every command runs under the session's own
// operation timeout (opguard.Run), which closes the connection when it
// fires, and that unblocks the reader as a deadline would. Write deadlines
// and Close pass through.
type guardedConn struct{ net.Conn }

// SetReadDeadline does nothing; see guardedConn.
func (guardedConn) SetReadDeadline(time.Time) error { return nil }

// SetDeadline sets only the write deadline; see guardedConn.
func (c guardedConn) SetDeadline(t time.Time) error { return c.Conn.SetWriteDeadline(t) }
