package preflight

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/imapload/imapload/internal/opguard"
)

// Check connects to t once as the load will (TCP, then TLS or STARTTLS as
// t says), reads the greeting and logs in as t.User, then logs out. It
// returns nil, or an error wrapping one of the package's sentinels that
// names the mistake and its fix in imapload's flags. It makes one
// connection (two when the first gets no greeting and is probed for TLS)
// and one login. When ctx ends first, the error wraps ctx's.
func Check(ctx context.Context, t Target) error {
	t = t.withDefaults()
	if err := t.validate(); err != nil {
		return err
	}
	err := t.check(ctx)
	if ctx.Err() != nil {
		return fmt.Errorf("preflight: %s: %w", t.Addr, context.Cause(ctx))
	}
	return err
}

// check is Check once t is complete.
func (t Target) check(ctx context.Context) error {
	conn, err := t.dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	c, err := t.open(ctx, conn)
	if err != nil {
		return err
	}
	defer c.Close()
	return t.login(c)
}

// dial resolves the host and connects to it.
func (t Target) dial(ctx context.Context) (net.Conn, error) {
	if err := t.resolve(ctx); err != nil {
		return nil, err
	}
	conn, err := t.dialer().DialContext(ctx, "tcp", t.Addr)
	if err != nil {
		return nil, t.dialError(err)
	}
	return conn, nil
}

// resolve looks up a host that is not an IP address.
func (t Target) resolve(ctx context.Context) error {
	host := t.host()
	if net.ParseIP(host) != nil {
		return nil
	}
	lctx, cancel := context.WithTimeout(ctx, t.Timeout)
	defer cancel()
	if _, err := t.Resolver.LookupHost(lctx, host); err != nil {
		return fmt.Errorf("%w (%s): %v: check the host name in --imap", ErrNoSuchHost, t.Addr, err)
	}
	return nil
}

// dialError names what a failed dial means.
func (t Target) dialError(err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%w (%s): connection refused: is the server running, and is the port in --imap right? (IMAP is usually 143, IMAPS 993)",
			ErrClosedPort, t.Addr)
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("%w (%s): no answer to the connection within %s: is the host up, or does a firewall drop the packets?",
			ErrUnreachable, t.Addr, t.Timeout)
	}
	return fmt.Errorf("%w (%s): %v", ErrUnreachable, t.Addr, err)
}

// open returns a client that has read the greeting over the connection
// t describes: implicit TLS, STARTTLS or clear text.
func (t Target) open(ctx context.Context, conn net.Conn) (*imapclient.Client, error) {
	if t.TLS {
		tc, err := t.handshake(ctx, conn, t.tlsConfig())
		if err != nil {
			return nil, err
		}
		conn = tc
	}
	greeted, err := t.greeting(ctx, conn)
	if err != nil {
		return nil, err
	}
	if t.StartTLS {
		return t.startTLS(greeted)
	}
	return imapclient.New(greeted, nil), nil
}

// guard runs op and closes c if op has not returned within t.Timeout; what
// names the operation in the error that says so.
func (t Target) guard(c io.Closer, what string, op func() error) error {
	err := opguard.Run(c, t.Timeout, op)
	if errors.Is(err, opguard.ErrTimeout) {
		return fmt.Errorf("%w (%s): no answer to %s within %s", ErrNoAnswer, t.Addr, what, t.Timeout)
	}
	return err
}
