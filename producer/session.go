package producer

import (
	"context"
	"crypto/tls"
	"errors"
	"math/rand/v2"
	"net"
	"sync/atomic"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-sasl"

	"github.com/imapload/imapload/internal/opguard"
	"github.com/imapload/imapload/messages"
)

// farewellTimeout bounds the unrecorded LOGOUT at the end of a step.
const farewellTimeout = 2 * time.Second

// session is one IMAP connection slot of a step (RFC 9051 §3: not
// authenticated → authenticated → selected → logout). It runs one command at
// a time, so a STORE and a FETCH of one message are never in flight together
// on a connection, and it reconnects on its own after a LOGOUT or a failure.
// A session is used by one goroutine.
type session struct {
	env      *sessionEnv
	rng      *rand.Rand
	c        *imapclient.Client // nil when disconnected
	acct     int                // leased account, -1 when disconnected
	selected bool               // INBOX is selected: FETCH and STORE may be sent
	uids     []known            // recently seen messages of INBOX, for FETCH, STORE, body and COPY
	folders  []string           // mailboxes other than INBOX from LIST, for STATUS
	ownReady bool               // ownMailbox exists (CREATEd on this connection)
	filed    int                // COPYs and MOVEs since ownMailbox was last trimmed
	exists   atomic.Int64       // messages in INBOX, from SELECT, EXISTS and EXPUNGE
	pushed   atomic.Pointer[pushWatch]
	pusher   *imapclient.Client // the second connection of the idle phase, nil until needed
	appends  uint64             // messages appended so far
	failures int                // consecutive failures; > 0 means wait before the next dial
}

// newSession returns session k of a step, disconnected. It does no I/O.
func newSession(env *sessionEnv, k int, seed uint64) *session {
	return &session{env: env, acct: -1, rng: newRand(seed, uint64(k))}
}

// run serves the step's queue from startAt until the queue is closed and
// drained or ctx ends, then logs out (unrecorded).
func (s *session) run(ctx context.Context, queue <-chan job, startAt time.Time) {
	defer s.farewell()
	if !s.pause(ctx, startAt) {
		return
	}
	if s.env.scripted {
		s.runScripts(ctx, queue)
		return
	}
	for ctx.Err() == nil {
		if s.c == nil {
			if !s.reconnect(ctx) {
				return
			}
			continue
		}
		if !s.next(ctx, queue) {
			return
		}
	}
}

// next waits for a command, or notices the connection dropped while idle. It
// returns false when the session is done.
func (s *session) next(ctx context.Context, queue <-chan job) bool {
	select {
	case j, ok := <-queue:
		if !ok {
			return false
		}
		if ctx.Err() != nil {
			s.env.drop(j)
			return false
		}
		s.serve(j)
	case <-s.c.Closed():
		s.lost()
	case <-ctx.Done():
		return false
	}
	return true
}

// reconnect waits out the backoff, then dials, logs in and selects INBOX. It
// returns false when the session should stop instead: ctx ended, or the
// dispatcher has finished (a session that is not connected when the step's
// load ends does not reconnect; the connected ones drain the queue).
func (s *session) reconnect(ctx context.Context) bool {
	if s.failures > 0 {
		wait := backoff(s.failures-1, backoffBase, backoffCap, s.rng.Float64())
		if !s.pause(ctx, time.Now().Add(wait)) {
			return false
		}
	}
	if err := s.connect(ctx); err != nil {
		s.failures++
		return ctx.Err() == nil
	}
	s.failures = 0
	return true
}

// pause waits until t. It returns false, at once, if ctx ends or the
// dispatcher has finished.
func (s *session) pause(ctx context.Context, t time.Time) bool {
	return sleepUntil(ctx, t, s.env.finished)
}

// connect sets the session up: dial (phase Dial), LOGIN (phase Login) with a
// leased account, SELECT INBOX (phase Select). Each step is recorded if it
// starts in the measurement window; a failure leaves s disconnected.
func (s *session) connect(ctx context.Context) error {
	if err := s.logIn(ctx, time.Time{}); err != nil {
		return err
	}
	err := s.setupStep(messages.Select, s.selectInbox)
	if err != nil {
		s.disconnect()
	}
	return err
}

// logIn leases an account, dials and logs in. The dial's response time runs
// from intended when it is set (a scripted session's intended start, so that
// a session that waited for a free slot shows it), else from the dial's
// start. A failure leaves s disconnected.
func (s *session) logIn(ctx context.Context, intended time.Time) error {
	idx, ok := s.env.pool.acquire()
	if !ok {
		now := time.Now()
		s.env.unscheduled(messages.Login, now, now, now, errNoFreeAccount)
		return errNoFreeAccount
	}
	if err := s.dialStep(ctx, idx, intended); err != nil {
		s.env.pool.release(idx)
		return err
	}
	err := s.setupStep(messages.Login, s.login(s.c, s.env.pool.account(idx)))
	if err != nil {
		s.disconnect()
	}
	return err
}

// login returns the configured login command (LOGIN or AUTHENTICATE
// PLAIN) of acct on c, recorded alike as phase Login.
func (s *session) login(c *imapclient.Client, acct Account) func() error {
	if s.env.cfg.Auth == AuthPlain {
		return func() error { return c.Authenticate(sasl.NewPlainClient("", acct.User, acct.Password)) }
	}
	return func() error { return c.Login(acct.User, acct.Password).Wait() }
}

func (s *session) dialStep(ctx context.Context, idx int, intended time.Time) error {
	start := time.Now()
	if intended.IsZero() {
		intended = start
	}
	c, tlsTime, err := s.dial(ctx, s.clientOptions())
	if err != nil && (ctx.Err() != nil || errors.Is(err, errSetupCut)) {
		return err // the step was stopped, or its window ended: not the server
	}
	s.env.setup(messages.Dial, intended, start, time.Now(), err)
	if err != nil {
		return err
	}
	if s.env.tlsConf != nil && s.env.tl.inWindow(start) {
		s.env.rec.RecordTLS(tlsTime)
	}
	s.c, s.acct = c, idx
	s.env.open.Add(1)
	return nil
}

// setupStep runs op, a set-up command of phase p, within the operation
// timeout; LOGIN and SELECT are also counted as set-up stages.
func (s *session) setupStep(p messages.Phase, op func() error) error {
	start := time.Now()
	guarded := func() error { return s.guard(s.env.cfg.OpTimeout, op) }
	var err error
	switch c := s.c; p {
	case messages.Login:
		err = s.env.inStage(context.Background(), stageLogin, func() { c.Close() }, guarded)
	case messages.Select:
		err = s.env.inStage(context.Background(), stageSelect, func() { c.Close() }, guarded)
	default:
		err = guarded()
	}
	if !errors.Is(err, errSetupCut) {
		s.env.unscheduled(p, start, start, time.Now(), err)
	}
	return err
}

// dial connects (TCP, then TLS if configured, timed apart) and waits for the
// server greeting, each within the operation timeout. The client gets opts.
func (s *session) dial(ctx context.Context, opts *imapclient.Options) (*imapclient.Client, time.Duration, error) {
	d := net.Dialer{Timeout: s.env.cfg.OpTimeout, LocalAddr: s.env.cfg.localAddr, KeepAlive: -1} // sessions are short; skip keep-alive set-up
	var conn net.Conn
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	err := s.env.inStage(ctx, stageConnect, cancel, func() (err error) {
		conn, err = d.DialContext(dctx, "tcp", s.env.cfg.Addr)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	if s.env.cfg.StartTLS {
		return s.startTLS(ctx, conn, opts)
	}
	var tlsTime time.Duration
	if s.env.tlsConf != nil {
		raw := conn
		err := s.env.inStage(ctx, stageTLS, func() { raw.Close() }, func() (err error) {
			conn, tlsTime, err = s.handshake(ctx, raw)
			return err
		})
		if err != nil {
			return nil, 0, err
		}
	}
	c := imapclient.New(guardedConn{conn}, opts)
	if err := s.greeting(ctx, c); err != nil {
		return nil, 0, err
	}
	return c, tlsTime, nil
}

// greeting waits for the server's greeting on c (set-up stage greeting),
// within the operation timeout; on failure c is closed.
func (s *session) greeting(ctx context.Context, c *imapclient.Client) error {
	err := s.env.inStage(ctx, stageGreeting, func() { c.Close() }, func() error { return opguard.Run(c, s.env.cfg.OpTimeout, c.WaitGreeting) })
	if err != nil {
		c.Close()
	}
	return err
}

// clientOptions track the INBOX message count from unilateral responses
// (RFC 9051 §7.4.1 EXPUNGE, §7.3.1 EXISTS), delivered on the reader
// goroutine, and time an EXISTS for the idle phase.
func (s *session) clientOptions() *imapclient.Options {
	return &imapclient.Options{UnilateralDataHandler: &imapclient.UnilateralDataHandler{
		Mailbox: func(d *imapclient.UnilateralDataMailbox) {
			if d.NumMessages != nil {
				s.exists.Store(int64(*d.NumMessages))
				s.existsSeen()
			}
		},
		Expunge: func(uint32) { s.exists.Add(-1) },
	}}
}

// startTLS runs STARTTLS and the TLS handshake on a plain connection,
// within the operation timeout; go-imap reads the greeting first. The TLS
// time it returns covers the STARTTLS exchange and the handshake, which
// go-imap does as one call.
func (s *session) startTLS(ctx context.Context, conn net.Conn, opts *imapclient.Options) (*imapclient.Client, time.Duration, error) {
	opts.TLSConfig = s.env.tlsConf
	start := time.Now()
	var c *imapclient.Client
	err := s.env.inStage(ctx, stageTLS, func() { conn.Close() }, func() error {
		return opguard.Run(conn, s.env.cfg.OpTimeout, func() (err error) {
			c, err = imapclient.NewStartTLS(guardedConn{conn}, opts)
			return err
		})
	})
	if err != nil {
		conn.Close()
		return nil, 0, err
	}
	tlsTime := time.Since(start)
	if err := s.greeting(ctx, c); err != nil {
		return nil, 0, err
	}
	return c, tlsTime, nil
}

func (s *session) handshake(ctx context.Context, conn net.Conn) (net.Conn, time.Duration, error) {
	start := time.Now()
	tc := tls.Client(conn, s.env.tlsConf)
	hctx, cancel := context.WithTimeout(ctx, s.env.cfg.OpTimeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		conn.Close()
		if ctx.Err() == nil && hctx.Err() != nil {
			err = errTimeout
		}
		return nil, 0, err
	}
	return tc, time.Since(start), nil
}

// lost handles a connection that broke: reconnect after a backoff.
func (s *session) lost() {
	s.disconnect()
	s.failures = max(s.failures, 1)
}

// disconnect closes the connection and returns the account lease.
func (s *session) disconnect() {
	if s.c == nil {
		return
	}
	s.c.Close()
	s.c = nil
	s.env.open.Add(-1)
	s.env.pool.release(s.acct)
	s.acct = -1
	s.closePusher()
	s.selected, s.ownReady, s.filed = false, false, 0
	s.uids, s.folders = s.uids[:0], s.folders[:0]
	s.exists.Store(0)
}

// farewell logs out at the end of the step, unrecorded.
func (s *session) farewell() {
	if s.c != nil {
		_ = s.guard(min(s.env.cfg.OpTimeout, farewellTimeout), func() error { return s.c.Logout().Wait() })
	}
	s.disconnect()
}

// closed reports whether the connection has gone.
func (s *session) closed() bool { return isClosed(s.c) }

// guard runs op on the session's connection within d (see opguard.Run).
func (s *session) guard(d time.Duration, op func() error) error { return opguard.Run(s.c, d, op) }
