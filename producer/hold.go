package producer

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/imapload/imapload/messages"
)

// A held connection's wait before it is set up again starts at a second and
// grows to half a minute: slower than a session's (backoffBase, backoffCap),
// as a mail client waits, so that a server refusing thousands of
// connections at its limit is not stormed by their retries.
const (
	holdBackoffBase = time.Second
	holdBackoffCap  = 30 * time.Second
)

// holdStream is the random stream of held connection k: holdStream+k, apart
// from the sessions' (0, 1, …) and the dispatcher's.
const holdStream = 1 << 40

// holder holds a step's IDLE connections (RFC 2177) beside its sessions:
// each logged in, INBOX selected and IDLE accepted, re-IDLEd every
// IdlePeriod, set up again after a jittered backoff when it breaks, and
// logged out at the step's end. Connection k logs in as account k modulo the
// account list (from an offset of the step's seed), outside the sessions'
// account pool, so that held connections never take a session's account
// slot. Each set-up is recorded as phase hold: dial, login, SELECT and IDLE
// accepted, apart from the sessions' dial and login.
type holder struct {
	env    *sessionEnv
	n      int
	seed   uint64
	offset int // account of connection 0
	dialer net.Dialer
}

// newHolder returns the holder of n connections. It does no I/O.
func newHolder(env *sessionEnv, n int, seed uint64) *holder {
	cfg := env.cfg
	return &holder{
		env: env, n: n, seed: seed,
		offset: int(seed % uint64(len(cfg.Accounts))),
		dialer: net.Dialer{Timeout: cfg.OpTimeout, LocalAddr: cfg.localAddr, KeepAlive: -1},
	}
}

// start starts connection k of n at tl.start plus its stagger offset, each
// in a goroutine wg waits for; they end, logged out, once ctx does.
func (h *holder) start(ctx context.Context, wg *sync.WaitGroup, stagger time.Duration) {
	h.env.held.watch(h.env.tl)
	for k := range h.n {
		at := h.env.tl.start.Add(staggerOffset(h.env.cfg.ID, k, h.n, stagger))
		wg.Go(func() { h.hold(ctx, k, at) })
	}
}

// hold keeps connection k up from at until ctx ends.
func (h *holder) hold(ctx context.Context, k int, at time.Time) {
	if !sleepUntil(ctx, at, nil) {
		return
	}
	var rng *rand.Rand // made at the first failure: most connections never need one
	acct := h.env.cfg.Accounts[(h.offset+k)%len(h.env.cfg.Accounts)]
	for failures := 0; ctx.Err() == nil; {
		if failures > 0 {
			if rng == nil {
				rng = newRand(h.seed, holdStream+uint64(k))
			}
			if !sleepUntil(ctx, time.Now().Add(backoff(failures-1, holdBackoffBase, holdBackoffCap, rng.Float64())), nil) {
				return
			}
		}
		c, err := h.setup(ctx, acct)
		if err != nil {
			failures++
			continue
		}
		failures = 1 // a connection that breaks waits before the next set-up
		if h.keep(ctx, c, acct.User) {
			return
		}
	}
}

// keep idles on c, account's, until ctx ends (then logs out and reports
// true) or c breaks (reported false). While the step delivers mail, c
// watches for it (see watchIdle).
func (h *holder) keep(ctx context.Context, c *idleConn, account string) bool {
	h.env.held.up()
	stop := context.AfterFunc(ctx, c.wake)
	defer stop()
	var err error
	if w := h.env.inbox; w != nil {
		w.up(account)
		err = h.watchIdle(ctx, c, w)
		w.down(account)
	} else {
		err = h.idle(ctx, c)
	}
	h.env.held.down(time.Now(), err != nil)
	if err != nil {
		h.env.fail(messages.Hold, fmt.Errorf("held connection dropped: %w", err), false) // logged once per kind
		return false
	}
	c.logout(min(h.env.cfg.OpTimeout, farewellTimeout))
	return true
}

// idle waits on c and re-IDLEs it every IdlePeriod until ctx ends (nil) or
// the connection breaks.
func (h *holder) idle(ctx context.Context, c *idleConn) error {
	for {
		if err := c.wait(ctx, time.Now().Add(h.env.cfg.IdlePeriod)); err != nil || ctx.Err() != nil {
			return err
		}
		if err := c.reidle(h.env.cfg.OpTimeout); err != nil {
			return err
		}
	}
}

// watchIdle is idle for a step that delivers mail: an EXISTS makes c
// fetch the new messages' Message-IDs for w (idlewatch.go). An exchange cut
// short by the step's end is no failure.
func (h *holder) watchIdle(ctx context.Context, c *idleConn, w *inboxWatch) error {
	until := time.Now().Add(h.env.cfg.IdlePeriod)
	for {
		ev, err := c.waitExists(ctx, until)
		if err != nil || ctx.Err() != nil {
			return err
		}
		if ev.at.IsZero() {
			c.end()
			if err := c.reidle(h.env.cfg.OpTimeout); err != nil {
				return err
			}
			until = time.Now().Add(h.env.cfg.IdlePeriod)
			continue
		}
		err = c.fetchNew(ev, h.env.cfg.OpTimeout, func(id string, at time.Time) { w.sighted(c, id, at) })
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// setup dials, logs in, selects INBOX and starts IDLE, recorded as phase
// hold (unless the step was stopped meanwhile).
func (h *holder) setup(ctx context.Context, acct Account) (*idleConn, error) {
	start := time.Now()
	c, err := h.connect(ctx, acct)
	if err != nil && ctx.Err() != nil {
		return nil, err
	}
	h.env.unscheduled(messages.Hold, start, start, time.Now(), err)
	return c, err
}

func (h *holder) connect(ctx context.Context, acct Account) (*idleConn, error) {
	cfg := h.env.cfg
	c, err := dialIdle(ctx, &h.dialer, cfg.Addr, h.env.tlsConf, cfg.StartTLS, cfg.OpTimeout)
	if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
		return nil, fmt.Errorf("%s%w (raise ulimit -n)", messages.GeneratorKind, err) // ours, not the server's
	}
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, c.wake) // the step's end cuts a set-up short
	defer stop()
	err = c.login(acct.User, acct.Password, cfg.Auth == AuthPlain)
	if err == nil {
		err = c.selectInbox()
	}
	if err == nil {
		err = c.idle()
	}
	if err != nil {
		return nil, c.fail(err)
	}
	c.end()
	return c, nil
}

// sleepUntil waits until t. It returns false, at once, if ctx ends or stop
// (nil: never) is closed first.
func sleepUntil(ctx context.Context, t time.Time, stop <-chan struct{}) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return ctx.Err() == nil
	case <-ctx.Done():
		return false
	case <-stop:
		return false
	}
}
