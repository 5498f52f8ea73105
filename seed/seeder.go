package seed

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Options configures a Seeder. Addr, Accounts, Targets and Source are
// required; a zero field of the others means its default.
type Options struct {
	Addr      string      // the server's host:port
	TLS       bool        // implicit TLS (IMAPS)
	StartTLS  bool        // STARTTLS on a plain port; not with TLS
	TLSConfig *tls.Config // for TLS or StartTLS; nil: the system roots
	LocalAddr string      // source IP of every dial, "" for any
	Plain     bool        // log in with AUTHENTICATE PLAIN instead of LOGIN
	// LMTPAddr, when set, is an LMTP server (RFC 2033, "host:port") that
	// INBOX's missing messages are delivered to, as mail arrives, instead
	// of APPENDed; the other folders are still APPENDed, and every folder
	// is still counted over IMAP. Delivered mail gets its INTERNALDATE and
	// flags from the server.
	LMTPAddr string

	Accounts []Account // the accounts to fill
	Targets  []Target  // what each account's folders should hold
	Source   Source    // where messages come from

	Concurrency int           // accounts filled at once, one connection each; default 4
	Pipeline    int           // APPENDs a connection sends before it waits for an answer; default 1
	OpTimeout   time.Duration // for one command (a whole APPEND included); default 2 min
	// GiveUpAfter stops the run when that many accounts in a row failed
	// before any succeeded (a wrong password, a server refusing all);
	// default 10, negative never.
	GiveUpAfter int
}

const (
	defaultConcurrency = 4
	defaultPipeline    = 1
	defaultOpTimeout   = 2 * time.Minute
	defaultGiveUpAfter = 10
)

func (o Options) withDefaults() Options {
	if o.Concurrency == 0 {
		o.Concurrency = defaultConcurrency
	}
	if o.Pipeline == 0 {
		o.Pipeline = defaultPipeline
	}
	if o.OpTimeout == 0 {
		o.OpTimeout = defaultOpTimeout
	}
	if o.GiveUpAfter == 0 {
		o.GiveUpAfter = defaultGiveUpAfter
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.Addr == "":
		return fmt.Errorf("%w: no server address", ErrBadOptions)
	case o.TLS && o.StartTLS:
		return fmt.Errorf("%w: TLS and StartTLS together", ErrBadOptions)
	case len(o.Accounts) == 0:
		return fmt.Errorf("%w: no account", ErrBadOptions)
	case len(o.Targets) == 0 || o.Source == nil:
		return fmt.Errorf("%w: no folder target or no message source", ErrBadOptions)
	case o.Concurrency < 0 || o.Pipeline < 0 || o.OpTimeout < 0:
		return fmt.Errorf("%w: negative Concurrency, Pipeline or OpTimeout", ErrBadOptions)
	}
	return nil
}

// Seeder fills accounts with mail. Create it with New, run it once with Run;
// Stats may be called at any time from any goroutine.
type Seeder struct {
	o         Options
	tlsConf   *tls.Config
	localAddr net.Addr
	start     atomic.Int64 // Run's start, Unix nanoseconds; 0 before

	done, failed, full, created atomic.Int64 // accounts; folders created
	messages, bytes             atomic.Int64 // appended
	streak                      atomic.Int64 // failures before the first success; -1 after one

	mu     sync.Mutex
	errors errorGroups
}

// New checks o and returns a Seeder. It does no I/O.
func New(o Options) (*Seeder, error) {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	s := &Seeder{o: o, tlsConf: o.clientTLS()}
	if o.LocalAddr != "" {
		ip := net.ParseIP(o.LocalAddr)
		if ip == nil {
			return nil, fmt.Errorf("%w: LocalAddr %q is not an IP address", ErrBadOptions, o.LocalAddr)
		}
		s.localAddr = &net.TCPAddr{IP: ip}
	}
	return s, nil
}

// Stats is the progress of a run.
type Stats struct {
	Accounts int           // to fill
	Done     int           // filled (or found full)
	Failed   int           // given up on, for an error
	Full     int           // of Done, found already at their targets
	Created  int           // folders created
	Messages int64         // appended
	Bytes    int64         // appended, as sent
	Elapsed  time.Duration // since Run started
}

// Stats returns the progress so far.
func (s *Seeder) Stats() Stats {
	return Stats{Accounts: len(s.o.Accounts), Done: int(s.done.Load()), Failed: int(s.failed.Load()),
		Full: int(s.full.Load()), Created: int(s.created.Load()), Messages: s.messages.Load(),
		Bytes: s.bytes.Load(), Elapsed: s.elapsed()}
}

// elapsed returns the time since Run started, 0 before.
func (s *Seeder) elapsed() time.Duration {
	start := s.start.Load()
	if start == 0 {
		return 0
	}
	return time.Since(time.Unix(0, start))
}

// Summary is what a finished run did.
type Summary struct {
	Stats
	Errors      []ErrorGroup // failed accounts, grouped by error
	Interrupted bool         // ctx ended before every account was done
	GaveUp      bool         // stopped after GiveUpAfter failures in a row
}

// Run fills the accounts, Concurrency at a time, and returns what it did.
// Its error is nil when every account reached its targets, ErrInterrupted
// when ctx ended first (what was appended stays; a re-run continues),
// ErrAccounts when some failed (Summary.Errors says why).
func (s *Seeder) Run(ctx context.Context) (Summary, error) {
	s.start.Store(time.Now().UnixNano())
	next := make(chan Account)
	var wg sync.WaitGroup
	for range min(s.o.Concurrency, len(s.o.Accounts)) {
		wg.Go(func() {
			for a := range next {
				s.finish(a, s.seedAccount(ctx, a))
			}
		})
	}
	gaveUp := s.feed(ctx, next)
	wg.Wait()
	return s.summary(ctx, gaveUp)
}

// feed hands out the accounts until ctx ends or the run gives up, and
// reports whether it gave up.
func (s *Seeder) feed(ctx context.Context, next chan<- Account) bool {
	defer close(next)
	for _, a := range s.o.Accounts {
		if s.hopeless() {
			return true
		}
		select {
		case next <- a:
		case <-ctx.Done():
			return false
		}
	}
	return false
}

// hopeless reports whether GiveUpAfter accounts failed before any succeeded.
func (s *Seeder) hopeless() bool {
	return s.o.GiveUpAfter > 0 && s.streak.Load() >= int64(s.o.GiveUpAfter)
}

// finish counts an account's result.
func (s *Seeder) finish(a Account, err error) {
	switch {
	case err == nil:
		s.done.Add(1)
		s.streak.Store(-1)
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
	default:
		s.failed.Add(1)
		if s.streak.Load() >= 0 {
			s.streak.Add(1)
		}
		s.mu.Lock()
		s.errors.add(a.User, err)
		s.mu.Unlock()
	}
}

func (s *Seeder) summary(ctx context.Context, gaveUp bool) (Summary, error) {
	sum := Summary{Stats: s.Stats(), Errors: s.errors.sorted(), GaveUp: gaveUp}
	sum.Interrupted = ctx.Err() != nil && sum.Done+sum.Failed < sum.Accounts
	switch {
	case sum.Interrupted:
		return sum, ErrInterrupted
	case sum.Failed > 0 || gaveUp:
		return sum, ErrAccounts
	}
	return sum, nil
}
