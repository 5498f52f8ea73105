package embedded

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
)

// tlsHandshakeTimeout bounds a TLS client that connects and stays silent.
const tlsHandshakeTimeout = 10 * time.Second

// IMAP is a running IMAP test server. Its methods are safe for concurrent
// use.
type IMAP struct {
	opts   IMAPOptions
	users  map[string]*imapmemserver.User // read-only after start
	auth   *authenticator                 // nil without BcryptCost
	gate   *gate
	faults *faults
	stats  counters
	trimMu sync.Mutex

	serverTLS *tls.Config // implicit TLS on accept; nil without TLS
	startTLS  *tls.Config // offered by STARTTLS; nil without StartTLS
	rootCAs   *x509.CertPool
	tlsName   string

	srv       *imapserver.Server
	ln        net.Listener
	metrics   *metricsServer // nil without MetricsAddr
	lmtp      *lmtpServer    // nil without LMTPAddr
	done      chan struct{}  // closed by Close
	served    chan struct{}  // closed when Serve returns
	sessWG    sync.WaitGroup
	closeOnce sync.Once
	closeErr  error

	mu       sync.Mutex
	closing  bool
	conns    map[*clientConn]struct{}
	sessions map[*session]SessionInfo
}

// StartIMAP seeds the accounts, starts listening and serving, and returns
// once the listener accepts connections (this does I/O). Call Close when
// done.
func StartIMAP(opts *IMAPOptions) (*IMAP, error) {
	o := opts.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	s := &IMAP{opts: o, faults: newFaults(&o), done: make(chan struct{}), served: make(chan struct{}),
		conns: make(map[*clientConn]struct{}), sessions: make(map[*session]SessionInfo)}
	s.gate = newGate(&o, s.done)
	if err := s.prepare(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("embedded: IMAP listen: %w", err)
	}
	s.ln = ln
	if err := s.startMetrics(); err != nil {
		ln.Close()
		return nil, err
	}
	if err := s.startLMTP(); err != nil {
		ln.Close()
		s.stopMetrics()
		return nil, err
	}
	s.srv = imapserver.New(s.serverOptions())
	go s.serve()
	return s, nil
}

// prepare seeds the users and makes the password hashes and the
// certificate, before any connection can arrive.
func (s *IMAP) prepare() error {
	users, err := seedUsers(&s.opts)
	if err != nil {
		return err
	}
	s.users = users
	if s.opts.BcryptCost > 0 {
		passwords := make(map[string]string, len(users))
		for name := range users {
			passwords[name] = s.opts.Password
		}
		if s.auth, err = newAuthenticator(passwords, s.opts.BcryptCost, s.opts.LoginCacheTTL, &s.stats); err != nil {
			return err
		}
	}
	if !s.opts.TLS && !s.opts.StartTLS {
		return nil
	}
	if err := s.prepareTLS(); err != nil {
		return err
	}
	if s.opts.StartTLS {
		s.startTLS, s.serverTLS = s.serverTLS, nil
	}
	return nil
}

func (s *IMAP) prepareTLS() error {
	hosts := []string{"127.0.0.1", "::1", "localhost"}
	s.tlsName = "127.0.0.1"
	if host, _, err := net.SplitHostPort(s.opts.Addr); err == nil {
		if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() && !ip.IsLoopback() {
			hosts, s.tlsName = append(hosts, host), host
		}
	}
	cert, pool, err := SelfSignedCert(hosts...)
	if err != nil {
		return err
	}
	s.serverTLS, s.rootCAs = serverTLS(cert), pool
	return nil
}

// serverOptions configures go-imap's server. InsecureAuth is always on:
// the server sees our clientConn, not the *tls.Conn below it, so it cannot
// tell that a TLS server's connections are all encrypted (and LOGIN and
// AUTHENTICATE PLAIN are both offered on a plain connection). A TLSConfig
// makes go-imap offer and run STARTTLS.
func (s *IMAP) serverOptions() *imapserver.Options {
	return &imapserver.Options{
		NewSession:   s.newSession,
		Caps:         imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}},
		Logger:       s.logger(),
		InsecureAuth: true,
		TLSConfig:    s.startTLS,
	}
}

// logger returns Logf as an imapserver.Logger, discarding by default.
func (s *IMAP) logger() printfLogger {
	if s.opts.Logf == nil {
		return func(string, ...any) {}
	}
	return s.opts.Logf
}

// printfLogger adapts a printf-style function to imapserver.Logger.
type printfLogger func(format string, args ...any)

func (l printfLogger) Printf(format string, args ...any) { l(format, args...) }

// Println makes it an smtp.Logger too (the LMTP listener's).
func (l printfLogger) Println(args ...any) { l("%s", strings.TrimSuffix(fmt.Sprintln(args...), "\n")) }

func (s *IMAP) serve() {
	defer close(s.served)
	err := s.srv.Serve(listener{Listener: s.ln, s: s})
	if err != nil && !s.isClosing() {
		s.logger().Printf("embedded: IMAP serve: %v", err)
	}
}

func (s *IMAP) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// Addr returns the "ip:port" the server listens on.
func (s *IMAP) Addr() string { return s.ln.Addr().String() }

// Close stops accepting, closes every connection and waits until every
// connection's goroutine has finished. Calling it again returns the first
// call's result.
func (s *IMAP) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closing = true
		s.mu.Unlock()
		close(s.done) // wakes commands waiting at the gate
		if err := s.ln.Close(); err != nil {
			s.closeErr = fmt.Errorf("embedded: IMAP close: %w", err)
		}
		<-s.served // no connection arrives after this
		if err := s.closeLMTP(); err != nil && s.closeErr == nil {
			s.closeErr = err
		}
		// Closing the TCP connections first makes go-imap's own closing
		// (TLS close_notify included) fail fast instead of waiting on
		// clients that do not read.
		for _, c := range s.openConns() {
			c.abort()
		}
		_ = s.srv.Close()
		s.sessWG.Wait()
		s.stopMetrics()
	})
	return s.closeErr
}

// DropAll closes every open client connection abruptly, now. The server
// keeps accepting new ones.
func (s *IMAP) DropAll() {
	for _, c := range s.openConns() {
		c.drop()
	}
}

func (s *IMAP) openConns() []*clientConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*clientConn, 0, len(s.conns))
	for c := range s.conns {
		out = append(out, c)
	}
	return out
}
