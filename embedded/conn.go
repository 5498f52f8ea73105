package embedded

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// readChunk is the initial read buffer of a connection.
const readChunk = 4 << 10

// clientConn is one accepted connection as go-imap's server sees it. It
// sits above TLS, so it reads plaintext: it splits the byte stream into
// commands and hands each to the server only after the gate admitted it,
// which charges every command once (LOGOUT and CAPABILITY included, which
// never reach a Session). It also carries the connection's fault plan.
type clientConn struct {
	net.Conn          // raw, or a *tls.Conn over raw
	raw      net.Conn // the TCP connection, closed directly to drop abruptly
	s        *IMAP

	// Read side, used only by the server's reading goroutine.
	scan    cmdScanner
	buf     []byte // backing array of pending
	pending []byte // read from the network, not yet released
	ready   []byte // released to the server
	rerr    error  // read error to report once pending is released
	cmds    int    // commands admitted so far
	dropAt  int    // noDrop, 0 (after the greeting) or the k-th command
	through bool   // after STARTTLS: bytes are TLS records, passed as read

	contSeen atomic.Bool // the server sent a "+" continuation request
	greeted  atomic.Bool // the greeting has been written
	slow     atomic.Bool // the logged-in account is slow

	gone      chan struct{} // closed by shut
	shutOnce  sync.Once
	dropOnce  sync.Once
	remote    net.Addr
	remoteStr string
}

func newClientConn(s *IMAP, nc, raw net.Conn) *clientConn {
	return &clientConn{
		Conn: nc, raw: raw, s: s,
		dropAt:    s.faults.dropPoint(),
		gone:      make(chan struct{}),
		remote:    raw.RemoteAddr(),
		remoteStr: raw.RemoteAddr().String(),
	}
}

// Read hands the server the bytes admitted so far, admitting the next
// command when it has none.
func (c *clientConn) Read(p []byte) (int, error) {
	for len(c.ready) == 0 {
		if err := c.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, c.ready)
	c.ready = c.ready[n:]
	return n, nil
}

// fill releases the next segment (a command line, a literal…) of pending
// into ready, reading from the network as needed.
func (c *clientConn) fill() error {
	if c.scan.awaitingSync() && !c.contSeen.Load() {
		c.scan.cancelLiteral() // the server answered instead of sending "+"
	}
	for {
		if c.through && len(c.pending) > 0 {
			c.ready, c.pending = c.pending, nil
			return nil
		}
		if n, name, start := c.scan.step(c.pending); n > 0 {
			return c.release(n, name, start)
		}
		if c.rerr != nil {
			return c.flushOnError()
		}
		c.readMore()
	}
}

func (c *clientConn) release(n int, name string, start bool) error {
	if start {
		if err := c.admit(name); err != nil {
			return err
		}
	}
	c.ready, c.pending = c.pending[:n], c.pending[n:]
	c.through = start && name == "STARTTLS" && c.s.startTLS != nil
	if c.scan.awaitingSync() {
		c.contSeen.Store(false)
	}
	return nil
}

// flushOnError releases a partial line left when the network failed, then
// reports the failure once.
func (c *clientConn) flushOnError() error {
	if len(c.pending) > 0 {
		c.ready, c.pending = c.pending, nil
		c.scan = cmdScanner{}
		return nil
	}
	err := c.rerr
	c.rerr = nil
	return err
}

// readMore appends one network read to pending. It runs only when ready is
// empty, so it may move pending to the front of buf.
func (c *clientConn) readMore() {
	if len(c.pending) == len(c.buf) {
		c.buf = make([]byte, max(readChunk, 2*len(c.buf)))
	}
	n := copy(c.buf, c.pending)
	m, err := c.Conn.Read(c.buf[n:])
	c.pending, c.rerr = c.buf[:n+m], err
}

// admit counts a command, applies the connection's drop plan and waits at
// the gate.
func (c *clientConn) admit(name string) error {
	c.cmds++
	c.s.stats.command(countedName(name))
	if c.cmds == c.dropAt {
		c.drop()
		return dropError()
	}
	return c.s.gate.admit(c.gone, c.slow.Load() && mailboxCommand(name), wearsCommand(name))
}

// Write notes continuation requests (for the scanner) and drops the
// connection right after the greeting when that is its plan.
func (c *clientConn) Write(p []byte) (int, error) {
	if c.s.opts.NoGreeting {
		<-c.gone // the greeting, the first write, never goes out
		return 0, net.ErrClosed
	}
	if len(p) > 0 && p[0] == '+' {
		c.contSeen.Store(true)
	}
	n, err := c.Conn.Write(p)
	if c.dropAt == 0 && c.greeted.CompareAndSwap(false, true) {
		c.drop()
	}
	return n, err
}

// pause waits d (LoginDelay), or until the connection or the server closes.
func (c *clientConn) pause(d time.Duration) error { return c.s.gate.wait(d, c.gone) }

// Close closes the connection (sending TLS close_notify if any).
func (c *clientConn) Close() error {
	c.shut()
	return c.Conn.Close()
}

// drop closes the connection on purpose and counts it.
func (c *clientConn) drop() {
	c.dropOnce.Do(func() { c.s.stats.dropped.Add(1) })
	c.abort()
}

// abort closes the TCP connection abruptly: no BYE, no TLS close_notify.
func (c *clientConn) abort() {
	c.shut()
	c.raw.Close()
}

// shut does the bookkeeping of the first close, whoever closes.
func (c *clientConn) shut() {
	c.shutOnce.Do(func() {
		close(c.gone)
		c.s.forgetConn(c)
	})
}
