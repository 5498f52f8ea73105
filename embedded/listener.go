package embedded

import (
	"crypto/tls"
	"net"
	"time"
)

var (
	_ net.Listener = listener{}
	_ net.Conn     = (*clientConn)(nil)
)

// listener hands go-imap's server our clientConn for every accepted TCP
// connection, wrapped in TLS first when the server uses TLS.
type listener struct {
	net.Listener
	s *IMAP
}

// Accept runs on the serve goroutine. Every connection it returns gets a
// session whose Close releases the server's WaitGroup slot taken here.
func (l listener) Accept() (net.Conn, error) {
	raw, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	nc := raw
	if l.s.serverTLS != nil {
		_ = raw.SetReadDeadline(now.Add(tlsHandshakeTimeout)) // the server resets it before reading a command
		nc = tls.Server(raw, l.s.serverTLS)
	}
	c := newClientConn(l.s, nc, raw)
	l.s.trackConn(c)
	if l.s.opts.OnConnect != nil {
		l.s.opts.OnConnect(c.remote, now)
	}
	return c, nil
}

// trackConn registers a new connection; one that arrives while the server
// closes is closed at once (its session still runs and ends).
func (s *IMAP) trackConn(c *clientConn) {
	s.sessWG.Add(1)
	s.stats.connections.Add(1)
	s.stats.active.Add(1)
	s.mu.Lock()
	closing := s.closing
	if !closing {
		s.conns[c] = struct{}{}
	}
	s.mu.Unlock()
	if closing {
		c.Close()
	}
}

// forgetConn unregisters a connection at its first close.
func (s *IMAP) forgetConn(c *clientConn) {
	s.stats.active.Add(-1)
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// loggedIn lists a session in Sessions.
func (s *IMAP) loggedIn(ss *session, info SessionInfo) {
	s.mu.Lock()
	s.sessions[ss] = info
	s.mu.Unlock()
}

// sessionDone unlists a session and releases its WaitGroup slot.
func (s *IMAP) sessionDone(ss *session) {
	s.mu.Lock()
	delete(s.sessions, ss)
	s.mu.Unlock()
	s.sessWG.Done()
}
