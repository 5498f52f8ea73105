package embedded

import (
	"net"
	"sync"
	"testing"

	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-imap/v2/imapserver"
)

// pipeListener is a net.Listener whose connections are net.Pipe pairs. A
// server on it runs inside a testing/synctest bubble: a goroutine blocked on
// a pipe is durably blocked (one blocked on a socket is not), so the
// bubble's fake clock advances through the server's timers and a test
// asserts on durations exactly, whatever the machine's load.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// dial hands the server one end of a new pipe and returns the other.
func (l *pipeListener) dial() (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// pipeIMAP is an IMAP server on a pipeListener, for tests inside a
// synctest bubble; Close (run by the test's cleanup) waits for it.
type pipeIMAP struct {
	*IMAP
	ln *pipeListener
}

// startPipeIMAP starts the server as StartIMAP does, on a pipeListener
// instead of a TCP socket. Call it inside the bubble.
func startPipeIMAP(t *testing.T, opts *IMAPOptions) *pipeIMAP {
	t.Helper()
	o := opts.withDefaults()
	if err := o.validate(); err != nil {
		t.Fatalf("IMAPOptions.validate() error = %v", err)
	}
	s := &IMAP{opts: o, faults: newFaults(&o), done: make(chan struct{}), served: make(chan struct{}),
		conns: make(map[*clientConn]struct{}), sessions: make(map[*session]SessionInfo)}
	s.gate = newGate(&o, s.done)
	if err := s.prepare(); err != nil {
		t.Fatalf("prepare() error = %v", err)
	}
	ln := newPipeListener()
	s.ln = ln
	s.srv = imapserver.New(s.serverOptions())
	go s.serve()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close() error = %v", err)
		}
	})
	return &pipeIMAP{IMAP: s, ln: ln}
}

// client connects a client and waits for the greeting; the test's cleanup
// closes it.
func (p *pipeIMAP) client(t *testing.T) *imapclient.Client {
	t.Helper()
	conn, err := p.ln.dial()
	if err != nil {
		t.Fatalf("dial() error = %v", err)
	}
	c := imapclient.New(conn, nil)
	t.Cleanup(func() { c.Close() })
	if err := c.WaitGreeting(); err != nil {
		t.Fatalf("WaitGreeting() error = %v", err)
	}
	return c
}

// login connects a client and logs in as user with the server's password.
func (p *pipeIMAP) login(t *testing.T, user string) *imapclient.Client {
	t.Helper()
	c := p.client(t)
	if err := c.Login(user, p.opts.Password).Wait(); err != nil {
		t.Fatalf("Login(%q) error = %v", user, err)
	}
	return c
}
