package preflight

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// maxShown bounds what an error quotes of a server's answer.
const maxShown = 80

// greeting waits GreetingWait for the server's first line and returns a
// connection that reads it again (for go-imap's client). A clear-text
// connection that gets no greeting is probed for TLS on a second one: an
// implicit-TLS port says nothing until the client's hello, and "add --tls"
// is then the fix, not a timeout.
func (t Target) greeting(ctx context.Context, conn net.Conn) (net.Conn, error) {
	br := bufio.NewReader(conn)
	_ = conn.SetReadDeadline(time.Now().Add(t.GreetingWait))
	line, err := br.ReadSlice('\n')
	_ = conn.SetReadDeadline(time.Time{})
	switch {
	case len(line) == 0 && !t.TLS:
		return nil, t.silent(ctx, err)
	case len(line) == 0:
		return nil, fmt.Errorf("%w (%s): the TLS handshake succeeded but no greeting came within %s (%v): is it an IMAP port?",
			ErrNoGreeting, t.Addr, t.GreetingWait, err)
	}
	if err := t.checkGreeting(line); err != nil {
		return nil, err
	}
	head := bytes.Clone(line)
	return &replayConn{Conn: conn, r: io.MultiReader(bytes.NewReader(head), br)}, nil
}

// checkGreeting refuses a first line that is no IMAP greeting, or a BYE
// (RFC 9051 §7.1.5: the server will not serve this connection).
func (t Target) checkGreeting(line []byte) error {
	switch {
	case bytes.HasPrefix(line, []byte("* OK")) || bytes.HasPrefix(line, []byte("* PREAUTH")):
		return nil
	case bytes.HasPrefix(line, []byte("* BYE")):
		return fmt.Errorf("%w (%s): it greeted with %s: too many connections, or this address is not served?",
			ErrGreetedBye, t.Addr, shown(line))
	}
	return fmt.Errorf("%w (%s): it answered %s, not an IMAP greeting: check the port in --imap", ErrNotIMAP, t.Addr, shown(line))
}

// silent is the error of a clear-text connection that got no greeting
// (readErr): a TLS port if a TLS handshake on a new connection succeeds.
func (t Target) silent(ctx context.Context, readErr error) error {
	if t.probeTLS(ctx) {
		fix := "add --tls"
		if t.StartTLS {
			fix = "use --tls instead of --starttls"
		}
		return fmt.Errorf("%w (%s): no greeting in clear text within %s, but a TLS handshake succeeded: %s",
			ErrTLSPort, t.Addr, t.GreetingWait, fix)
	}
	return fmt.Errorf("%w (%s): connected, but no greeting came within %s (%v), nor did a TLS handshake succeed: is it an IMAP port?",
		ErrNoGreeting, t.Addr, t.GreetingWait, readErr)
}

// probeTLS reports whether a TLS handshake with the port succeeds. The
// certificate is not checked: nothing is sent over the probe, which only
// asks whether the port speaks TLS (whether it is trusted is the next
// question, under --tls).
func (t Target) probeTLS(ctx context.Context) bool {
	conn, err := t.dialer().DialContext(ctx, "tcp", t.Addr)
	if err != nil {
		return false
	}
	defer conn.Close()
	cfg := t.tlsConfig()
	cfg.InsecureSkipVerify = true //nolint:gosec // a probe for TLS; nothing is sent over it
	hctx, cancel := context.WithTimeout(ctx, t.GreetingWait)
	defer cancel()
	return tls.Client(conn, cfg).HandshakeContext(hctx) == nil
}

// shown quotes the start of a server's answer for an error.
func shown(b []byte) string {
	b = bytes.TrimRight(b, "\r\n")
	if len(b) > maxShown {
		return fmt.Sprintf("%q…", b[:maxShown])
	}
	return fmt.Sprintf("%q", b)
}

// replayConn is a connection whose first bytes, already read, are read
// again.
type replayConn struct {
	net.Conn
	r io.Reader
}

func (c *replayConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// isTimeout reports whether err is a deadline or timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
