package producer

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emersion/go-sasl"

	"github.com/imapload/imapload/internal/mailgen"
	"github.com/imapload/imapload/messages"
)

// deliverStream is the random stream of the deliveries' dispatcher; a
// delivery's message has a stream of its own, deliverStream+1+n.
const deliverStream = 1 << 41

// delivery is one message to deliver: its recipient, its number in the
// step, and when it should have started.
type delivery struct {
	intended time.Time
	account  Account
	n        uint64
}

// deliverer offers a step's deliveries (StepInfo.DeliverRate): open loop,
// like the commands' dispatcher, each delivery a message of seed's
// realistic sizes (internal/mailgen) to one of the accounts, sent over a
// connection of its own by LMTP (RFC 2033) or SMTP (RFC 5321) as an MTA
// hands mail on. At most DeliverConns are in flight; a delivery that finds
// DeliverQueue full, or waits in it longer than deliverPatience, is
// dropped by the generator.
type deliverer struct {
	env    *sessionEnv
	addr   string
	lmtp   bool
	pacer  *pacer
	rng    *rand.Rand // the dispatcher's: accounts
	seed   uint64
	queue  chan delivery
	dialer net.Dialer
	tls    *tls.Config // SMTPTLS or SMTPStartTLS's, nil without
	auth   func() sasl.Client
	// drainEnd is when the step's drain ends (Unix ns), 0 until the
	// dispatcher is done.
	drainEnd atomic.Int64
}

// newDeliverer returns the deliverer of rate deliveries/s. It does no I/O.
func newDeliverer(env *sessionEnv, rate float64, arrival string, seed uint64) *deliverer {
	cfg := env.cfg
	addr, lmtp := cfg.LMTPAddr, true
	if addr == "" {
		addr, lmtp = cfg.SMTPAddr, false
	}
	return &deliverer{
		env: env, addr: addr, lmtp: lmtp, seed: seed,
		pacer:  newPacer(rate, arrival, seed^deliverStream),
		rng:    newRand(seed, deliverStream),
		queue:  make(chan delivery, cfg.DeliverQueue),
		dialer: net.Dialer{Timeout: cfg.OpTimeout, LocalAddr: cfg.localAddr, KeepAlive: -1},
		tls:    smtpTLSConfig(cfg), auth: smtpAuth(cfg),
	}
}

// run offers the deliveries until the step's end (or ctx's) and returns
// once those queued and in flight have finished. A queued delivery waits
// at most deliverPatience for a free connection, during the step and
// after it: one that waited longer counts as dropped (the target held
// every delivery connection that long), so that the queue holds no
// backlog older than that, neither from the warm-up into the window nor
// past the step's end into its final batch. Those in flight finish
// within OpTimeout of the end (their connection deadline).
func (dl *deliverer) run(ctx context.Context) {
	var workers sync.WaitGroup
	for range dl.env.cfg.DeliverConns {
		workers.Go(func() {
			for d := range dl.queue {
				if ctx.Err() != nil || dl.stale(d, time.Now()) {
					dl.drop(d)
					continue
				}
				dl.deliver(d)
			}
		})
	}
	dl.dispatch(ctx)
	dl.drainEnd.Store(time.Now().Add(dl.env.cfg.OpTimeout).UnixNano())
	close(dl.queue)
	workers.Wait()
}

// deliverPatience is how long past its intended start a queued delivery
// may wait for a free connection and still be sent.
const deliverPatience = time.Second

// stale reports whether d, taken from the queue at now, is past sending:
// it waited longer than deliverPatience, or the step's drain is over.
func (dl *deliverer) stale(d delivery, now time.Time) bool {
	end := dl.drainEnd.Load()
	return now.Sub(d.intended) > deliverPatience || end != 0 && now.UnixNano() >= end
}

// deadline is a delivery's connection deadline if it starts at now:
// OpTimeout, within the step's drain once it has begun.
func (dl *deliverer) deadline(now time.Time) time.Time {
	d := now.Add(dl.env.cfg.OpTimeout)
	if end := dl.drainEnd.Load(); end != 0 && d.UnixNano() > end {
		return time.Unix(0, end)
	}
	return d
}

// dispatch hands each delivery on at its intended start.
func (dl *deliverer) dispatch(ctx context.Context) {
	tl := dl.env.tl
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	accts := dl.env.cfg.Accounts
	for n := uint64(0); ; n++ {
		off := dl.pacer.next()
		if off >= tl.length() {
			return
		}
		d := delivery{intended: tl.start.Add(off), account: accts[dl.rng.IntN(len(accts))], n: n}
		if wait := time.Until(d.intended); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return
			}
		}
		if tl.inWindow(d.intended) {
			dl.env.rec.Lag(time.Since(d.intended))
		}
		select {
		case dl.queue <- d:
		default:
			dl.drop(d)
		}
	}
}

func (dl *deliverer) drop(d delivery) {
	if dl.env.tl.inWindow(d.intended) {
		dl.env.rec.DropApart(messages.Deliver)
	}
}

// deliver sends d and records it: phase deliver from its intended start
// (service time from the dial) to the recipient's reply, and, when its
// account has a held connection, the wait for its arrival there.
func (dl *deliverer) deliver(d delivery) {
	id, msg := dl.message(d)
	start := time.Now()
	watched, err := dl.send(d, id, msg)
	end := time.Now()
	in := dl.env.tl.inWindow(d.intended)
	switch {
	case err != nil:
		dl.env.fail(messages.Deliver, err, in)
	case in:
		dl.env.rec.Record(messages.Deliver, end.Sub(d.intended), end.Sub(start))
		if watched {
			dl.env.rec.Arrived(messages.Arrivals{Watched: 1})
		}
	}
}

// message is d's message and its Message-ID, unique to the producer's
// step: headers and a body of a size drawn from DeliverSizes.
func (dl *deliverer) message(d delivery) (id string, msg []byte) {
	r := newRand(dl.seed, deliverStream+1+d.n)
	size := dl.env.cfg.sizes.Draw(r)
	id = fmt.Sprintf("%016x.%d.%s@deliver.imapload.invalid", dl.seed, d.n, dl.env.cfg.ID)
	head := mailgen.Headers(r, d.account.User, time.Now().UTC().Truncate(time.Second), func(*rand.Rand) string { return id })
	return id, mailgen.Body(r, head, size)
}

// send delivers msg over a connection of its own, within OpTimeout:
// dial, LHLO (EHLO), MAIL, RCPT, DATA and the recipient's reply. It
// reports whether the delivery was watched (its account has a held
// connection, where its arrival is awaited from the end of DATA on).
func (dl *deliverer) send(d delivery, id string, msg []byte) (watched bool, err error) {
	c, err := dl.open()
	if err != nil {
		return false, err
	}
	defer c.Close()
	if err := c.Mail("imapload@imapload.invalid", nil); err != nil {
		return false, stageError("MAIL", err)
	}
	if err := c.Rcpt(dl.recipient(d.account), nil); err != nil {
		return false, stageError("RCPT", err)
	}
	w, err := c.Data()
	if err != nil {
		return false, stageError("DATA", err)
	}
	if _, err := w.Write(msg); err != nil {
		return false, stageError("DATA", err)
	}
	watched = dl.env.inbox != nil && dl.env.inbox.expect(id, d.account.User, d.intended, time.Now())
	if dl.lmtp {
		_, err = w.CloseWithLMTPResponse()
	} else {
		err = w.Close()
	}
	if err != nil {
		if watched {
			dl.env.inbox.forget(id)
		}
		return false, stageError("DATA", err)
	}
	_ = c.Quit()
	return watched, nil
}

// recipient is the account's address: its name, at DeliverDomain when it
// has no domain of its own.
func (dl *deliverer) recipient(a Account) string {
	for i := range len(a.User) {
		if a.User[i] == '@' {
			return a.User
		}
	}
	return a.User + "@" + dl.env.cfg.DeliverDomain
}

// stageError names the step of the transaction that failed; a deadline is
// a timeout, as for IMAP commands.
func stageError(stage string, err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("%s: %w", stage, errTimeout)
	}
	return fmt.Errorf("%s: %w", stage, err)
}
