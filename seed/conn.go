package seed

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-sasl"
	"github.com/imapload/imapload/internal/opguard"
)

// Account is one IMAP login. The password is never logged nor put in an
// error.
type Account struct {
	User, Password string
}

// String shows the user only.
func (a Account) String() string { return a.User + ":***" }

// dial connects to the server (TCP, then TLS or STARTTLS as configured),
// waits for the greeting and logs in as a. Each step has the operation
// timeout; ctx stops the dial.
func (s *Seeder) dial(ctx context.Context, a Account) (*imapclient.Client, error) {
	c, err := s.connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", s.o.Addr, err)
	}
	login := func() error { return c.Login(a.User, a.Password).Wait() }
	if s.o.Plain {
		login = func() error { return c.Authenticate(sasl.NewPlainClient("", a.User, a.Password)) }
	}
	if err := guard(c, s.o.OpTimeout, login); err != nil {
		c.Close()
		return nil, fmt.Errorf("login: %w", err)
	}
	return c, nil
}

// connect returns a client that has read the server's greeting.
func (s *Seeder) connect(ctx context.Context) (*imapclient.Client, error) {
	d := net.Dialer{Timeout: s.o.OpTimeout, LocalAddr: s.localAddr}
	conn, err := d.DialContext(ctx, "tcp", s.o.Addr)
	if err != nil {
		return nil, err
	}
	var c *imapclient.Client
	switch {
	case s.o.StartTLS:
		err = guard(conn, s.o.OpTimeout, func() (err error) {
			c, err = imapclient.NewStartTLS(conn, &imapclient.Options{TLSConfig: s.tlsConf})
			return err
		})
	case s.o.TLS:
		tc := tls.Client(conn, s.tlsConf)
		if err = guard(conn, s.o.OpTimeout, func() error { return tc.HandshakeContext(ctx) }); err == nil {
			c = imapclient.New(tc, nil)
		}
	default:
		c = imapclient.New(conn, nil)
	}
	if err == nil {
		err = guard(c, s.o.OpTimeout, c.WaitGreeting)
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	return c, nil
}

// clientTLS returns the TLS configuration of the connections: the given
// one, naming the server's host when it names none.
func (o *Options) clientTLS() *tls.Config {
	if !o.TLS && !o.StartTLS {
		return nil
	}
	t := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.TLSConfig != nil {
		t = o.TLSConfig.Clone()
	}
	if t.ServerName == "" {
		t.ServerName, _, _ = net.SplitHostPort(o.Addr)
	}
	return t
}

// guard runs op and closes c if op has not returned within d, which makes
// op fail (see opguard.Run); it then returns an error that says so.
func guard(c io.Closer, d time.Duration, op func() error) error {
	err := opguard.Run(c, d, op)
	if errors.Is(err, opguard.ErrTimeout) {
		return fmt.Errorf("no answer within %s (--op-timeout)", d)
	}
	return err
}
