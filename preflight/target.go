package preflight

import (
	"crypto/tls"
	"fmt"
	"net"
	"time"
)

// Target is the IMAP server a run is about to load and one of its accounts,
// described as the load will reach it.
type Target struct {
	Addr      string      // the server's host:port
	TLS       bool        // implicit TLS (IMAPS), as --tls
	StartTLS  bool        // STARTTLS after the greeting, as --starttls; not with TLS
	TLSConfig *tls.Config // for TLS or StartTLS; nil trusts the system roots
	LocalAddr string      // source IP of the dial, "" for any
	Plain     bool        // AUTHENTICATE PLAIN instead of LOGIN, as --auth plain

	User     string // the account that logs in once
	Password string // its password: sent to the server only, never in an error

	// GreetingWait is how long a connection waits for the greeting before
	// it is taken for a TLS port and probed with a TLS handshake; default
	// 5 s. A server greets at once when it is well.
	GreetingWait time.Duration
	// Timeout bounds the dial, the TLS handshake and each command; default
	// 30 s, longer than the delay a server adds to a failed login
	// (Dovecot's auth_failure_delay, 2 s by default), so that a wrong
	// password reads as the refusal it is, not as a timeout.
	Timeout time.Duration
	// Resolver looks up the host; nil is net.DefaultResolver.
	Resolver *net.Resolver
}

// Defaults of Target's zero fields.
const (
	DefaultGreetingWait = 5 * time.Second
	DefaultTimeout      = 30 * time.Second
)

// String shows the target without the password.
func (t Target) String() string {
	return fmt.Sprintf("%s (%s) as %s", t.Addr, t.mode(), t.User)
}

// mode names how the target is reached, as the flags say it.
func (t Target) mode() string {
	switch {
	case t.TLS:
		return "--tls"
	case t.StartTLS:
		return "--starttls"
	}
	return "clear text"
}

func (t Target) withDefaults() Target {
	if t.GreetingWait <= 0 {
		t.GreetingWait = DefaultGreetingWait
	}
	if t.Timeout <= 0 {
		t.Timeout = DefaultTimeout
	}
	if t.Resolver == nil {
		t.Resolver = net.DefaultResolver
	}
	return t
}

func (t Target) validate() error {
	if t.TLS && t.StartTLS {
		return fmt.Errorf("%w: TLS and StartTLS together: choose one", ErrBadTarget)
	}
	if _, _, err := net.SplitHostPort(t.Addr); err != nil {
		return fmt.Errorf("%w: address %q: %v", ErrBadTarget, t.Addr, err)
	}
	if t.LocalAddr != "" && net.ParseIP(t.LocalAddr) == nil {
		return fmt.Errorf("%w: local address %q is not an IP address", ErrBadTarget, t.LocalAddr)
	}
	return nil
}

// host is the host part of Addr.
func (t Target) host() string {
	h, _, _ := net.SplitHostPort(t.Addr)
	return h
}

// tlsConfig is the configuration of the encrypted connection: the given
// one, naming the server's host when it names none.
func (t Target) tlsConfig() *tls.Config {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.TLSConfig != nil {
		c = t.TLSConfig.Clone()
	}
	if c.ServerName == "" {
		c.ServerName = t.host()
	}
	return c
}

// dialer dials from LocalAddr within Timeout.
func (t Target) dialer() *net.Dialer {
	d := &net.Dialer{Timeout: t.Timeout, Resolver: t.Resolver}
	if t.LocalAddr != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(t.LocalAddr)}
	}
	return d
}
