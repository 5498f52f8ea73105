package producer

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// idleConn is one held connection: a minimal IMAP client that can only log
// in, SELECT INBOX and IDLE (RFC 2177). It exists because a held connection
// must be cheap: go-imap's client keeps a reader goroutine and two 4 KiB
// buffers per connection, while an idleConn, once idling, is a socket and
// the one goroutine that waits on it (see BENCHMARKS.md). Its line buffer is
// borrowed from a pool for each exchange and returned while it idles.
//
// An idleConn is used by one goroutine; only wake may be called from another.
type idleConn struct {
	conn net.Conn
	br   *bufio.Reader // nil while idling
	tag  int
	// uidNext is the UID of INBOX's next message, noted at SELECT and
	// moved past each message fetched (idlewatch.go).
	uidNext uint64
}

// lineBufs are the line readers of exchanges in progress.
var lineBufs = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 512) }}

// errBye is a server that said BYE or closed the connection.
var errBye = errors.New("connection closed by the server")

// dialIdle dials addr (TLS or STARTTLS per tlsConf and startTLS) and reads
// the greeting, all within timeout.
func dialIdle(ctx context.Context, d *net.Dialer, addr string, tlsConf *tls.Config, startTLS bool, timeout time.Duration) (*idleConn, error) {
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &idleConn{conn: conn}
	c.begin(timeout)
	if tlsConf != nil && !startTLS {
		tc := tls.Client(conn, tlsConf)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, c.fail(err)
		}
		c.conn = tc
		c.br.Reset(tc)
	}
	if line, err := c.line(); err != nil {
		return nil, c.fail(err)
	} else if !bytes.HasPrefix(line, []byte("* OK")) && !bytes.HasPrefix(line, []byte("* PREAUTH")) {
		return nil, c.fail(fmt.Errorf("greeting: %s", trimLine(line)))
	}
	if startTLS {
		if err := c.command("STARTTLS"); err != nil {
			return nil, c.fail(err)
		}
		tc := tls.Client(conn, tlsConf)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, c.fail(err)
		}
		c.conn = tc
		c.br.Reset(tc)
	}
	return c, nil
}

// begin starts an exchange: a line reader and a deadline of timeout.
func (c *idleConn) begin(timeout time.Duration) {
	if c.br == nil {
		c.br = lineBufs.Get().(*bufio.Reader)
		c.br.Reset(c.conn)
	}
	c.conn.SetDeadline(time.Now().Add(timeout))
}

// end finishes an exchange: the reader goes back to the pool (whatever it
// still holds is untagged data, which an idling client ignores).
func (c *idleConn) end() {
	if c.br != nil {
		c.br.Reset(nil)
		lineBufs.Put(c.br)
		c.br = nil
	}
}

// fail closes the connection and returns err, a deadline as errTimeout.
func (c *idleConn) fail(err error) error {
	c.close()
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return errTimeout
	}
	if errors.Is(err, io.EOF) {
		return errBye
	}
	return err
}

func (c *idleConn) close() {
	c.end()
	c.conn.Close()
}

// login logs in with LOGIN, or AUTHENTICATE PLAIN when plain is set.
// Neither the user nor the password appears in an error it returns.
func (c *idleConn) login(user, password string, plain bool) error {
	if plain {
		if err := c.send("AUTHENTICATE PLAIN"); err != nil {
			return err
		}
		if err := c.await(); err != nil {
			return err
		}
		ir := base64.StdEncoding.EncodeToString([]byte("\x00" + user + "\x00" + password))
		if _, err := io.WriteString(c.conn, ir+"\r\n"); err != nil {
			return err
		}
		return c.done("AUTHENTICATE")
	}
	u, okU := quoted(user)
	p, okP := quoted(password)
	if !okU || !okP {
		return errUnquotable
	}
	return c.command("LOGIN " + u + " " + p)
}

// idle sends IDLE and waits for the server's continuation ("+ idling").
func (c *idleConn) idle() error {
	if err := c.send("IDLE"); err != nil {
		return err
	}
	return c.await()
}

// wait idles until the server closes the connection, sends something that
// is not an untagged response, or until (a deadline, returned as nil). It
// reads into a small buffer of its own and ignores what the server pushes
// (EXISTS, EXPUNGE, FETCH FLAGS): the connection is there to be held.
func (c *idleConn) wait(ctx context.Context, until time.Time) error {
	c.end()
	c.conn.SetDeadline(until)
	if ctx.Err() != nil { // a wake before the deadline was set is lost
		return nil
	}
	var buf [64]byte
	for {
		_, err := c.conn.Read(buf[:])
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil
		}
		if err != nil {
			return c.fail(err)
		}
	}
}

// wake makes a wait return at once; safe from another goroutine.
func (c *idleConn) wake() { c.conn.SetReadDeadline(time.Now()) }

// reidle ends IDLE with DONE, waits for the tagged OK and idles again.
func (c *idleConn) reidle(timeout time.Duration) error {
	c.begin(timeout)
	if _, err := io.WriteString(c.conn, "DONE\r\n"); err != nil {
		return c.fail(err)
	}
	if err := c.done("IDLE"); err != nil {
		return c.fail(err)
	}
	if err := c.idle(); err != nil {
		return c.fail(err)
	}
	return nil
}

// logout ends IDLE and logs out without waiting long for the answer, then
// closes the connection.
func (c *idleConn) logout(timeout time.Duration) {
	c.begin(timeout)
	c.tag++
	fmt.Fprintf(c.conn, "DONE\r\nh%d LOGOUT\r\n", c.tag)
	_ = c.done("LOGOUT")
	c.close()
}

// command sends one command and waits for its tagged OK.
func (c *idleConn) command(cmd string) error {
	if err := c.send(cmd); err != nil {
		return err
	}
	name, _, _ := strings.Cut(cmd, " ")
	return c.done(name)
}

func (c *idleConn) send(cmd string) error {
	c.tag++
	_, err := io.WriteString(c.conn, "h"+strconv.Itoa(c.tag)+" "+cmd+"\r\n")
	return err
}

// await reads until a continuation request ("+ …"); a tagged response first
// is the command's refusal.
func (c *idleConn) await() error {
	for {
		line, err := c.line()
		switch {
		case err != nil:
			return err
		case line[0] == '+':
			return nil
		case line[0] != '*':
			return fmt.Errorf("%s", trimLine(line))
		}
	}
}

// done reads until the tagged response of the last command sent: nil on OK,
// else an error "NAME: NO …" (the tag dropped).
func (c *idleConn) done(name string) error {
	tag := "h" + strconv.Itoa(c.tag) + " "
	for {
		line, err := c.line()
		if err != nil {
			return err
		}
		if bytes.HasPrefix(line, []byte("* BYE")) {
			return fmt.Errorf("%s: %s", name, trimLine(line))
		}
		if rest, ok := bytes.CutPrefix(line, []byte(tag)); ok {
			if bytes.HasPrefix(rest, []byte("OK")) {
				return nil
			}
			return fmt.Errorf("%s: %s", name, trimLine(rest))
		}
	}
}
