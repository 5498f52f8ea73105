package embedded

import (
	"fmt"
	"net"
	"strings"
	"time"
)

// IMAPOptions configures StartIMAP. A nil *IMAPOptions, and every zero
// field, means the default. Every knob that degrades the server is off by
// default.
type IMAPOptions struct {
	// Addr is the listen address. Default "127.0.0.1:0" (a random port).
	Addr string

	// Users is the number of seeded accounts, numbered from 1. Default 10.
	Users int
	// UserFormat names account i with fmt.Sprintf(UserFormat, i); it must
	// hold one integer verb ("user%d", "lt%04d"). Default "user%d".
	UserFormat string
	// Password is every seeded account's password. Default "secret".
	Password string
	// SeedMessages is the number of small RFC 5322 messages put in each
	// INBOX at start. Default 5; negative means none.
	SeedMessages int
	// MaxMessages bounds every mailbox: an APPEND that would exceed it first
	// expunges the oldest messages, quietly. Default 1000; negative means
	// unbounded.
	MaxMessages int

	// Workers is the number of command slots. Every command waits for a
	// free slot and holds it for ServiceTime before it runs, so the server
	// serves at most Workers/ServiceTime commands per second and queues the
	// rest without bound. 0 means no pool: each command just waits
	// ServiceTime.
	Workers int
	// ServiceTime is how long a command holds its slot (a timer wait, not CPU
	// work). 0 means none.
	ServiceTime time.Duration

	// LMTPAddr, when set, also serves LMTP (RFC 2033) there
	// ("127.0.0.1:0": a random port; see IMAP.LMTPAddr): mail delivered to
	// an account ("user1" or "user1@any.domain") is stored in its INBOX,
	// and its IDLE sessions are told of it. Default: none.
	LMTPAddr string
	// DeliverWorkers and DeliverServiceTime are the delivery pool, the
	// deliveries' own knobs: each recipient of a delivery holds one of
	// DeliverWorkers slots for DeliverServiceTime (a timer wait), after
	// passing the command gate (Workers, ServiceTime, SlowDelay) as a
	// command does, so that deliveries cost the server what commands cost
	// and can be made its bottleneck: at most
	// DeliverWorkers/DeliverServiceTime deliveries per second, the rest
	// queued without bound. 0 workers means no pool: each waits
	// DeliverServiceTime.
	DeliverWorkers     int
	DeliverServiceTime time.Duration

	// SlowFraction is the fraction of accounts, in [0, 1], whose mailbox
	// commands pay SlowDelay. The choice is a stable FNV hash of the name;
	// see IMAP.IsSlow.
	SlowFraction float64
	// SlowDelay is the extra latency of each mailbox command (every command
	// after LOGIN but LOGOUT, CAPABILITY and ENABLE) of a slow account.
	SlowDelay time.Duration

	// BcryptCost, when > 0, stores passwords as bcrypt hashes of this cost
	// (at most 31; 1–3 mean bcrypt's minimum, 4) and makes LOGIN check them,
	// with a login cache. Each step doubles the cost; 10 takes tens of
	// milliseconds. 0 means a plain, fast comparison.
	BcryptCost int
	// LoginCacheTTL is how long a successful login spares the next LOGIN of
	// that account with the same password a bcrypt comparison. Default 1 min.
	LoginCacheTTL time.Duration

	// TLS serves implicit TLS (IMAPS) with a self-signed ECDSA P-256
	// certificate made at start; clients use IMAP.TLSConfig.
	TLS bool
	// StartTLS offers STARTTLS (RFC 9051 §6.2.1) on the plain listener, with
	// the same kind of certificate; clients use IMAP.TLSConfig. It excludes
	// TLS. After STARTTLS a connection's commands are neither gated nor
	// counted nor fault-injected: the server's load model covers the plain
	// part only (the command scanner sits below TLS).
	StartTLS bool

	// DropFraction is the fraction, in [0, 1], of accepted connections closed
	// abruptly: right after the greeting or when one of the next three
	// commands arrives, chosen at random.
	DropFraction float64
	// NoFraction is the fraction, in [0, 1], of mailbox operations (all but
	// LOGIN, LOGOUT, NOOP, IDLE and CAPABILITY) answered
	// "NO [SERVERBUG] injected fault".
	NoFraction float64
	// RefuseSelect and RefuseList are the fractions, in [0, 1], of SELECT
	// (and EXAMINE) and of LIST commands answered "NO [SERVERBUG] injected
	// fault", drawn like NoFraction but on their own: 1 refuses every one,
	// a server that lets a session log in and never lets it open INBOX.
	RefuseSelect float64
	RefuseList   float64
	// NoGreeting makes the server accept connections and never send the
	// greeting (RFC 9051 §7.1): a client waits in its dial, as it would
	// against a port that speaks something else, or TLS.
	NoGreeting bool
	// LoginDelay is how long every LOGIN waits before it is answered, as a
	// slow authentication backend (or an auth-failure penalty) makes it.
	LoginDelay time.Duration
	// DegradeFor makes the server wear under overload, as a real one may
	// (caches evicted, a backend's queues full): once the commands that
	// wear (all but a session's set-up and LOGOUT) taken in a window of
	// DegradeAfter (default 1 s) held the slots for DegradeShare (default
	// 0.9) of it, every command but a session's set-up (LOGIN, SELECT, …) holds
	// its slot DegradeFactor (default 4) times ServiceTime, until
	// DegradeFor after that window. A worn server still offered more than
	// its worn capacity stays worn. Needs Workers. 0 means it never wears.
	DegradeFor    time.Duration
	DegradeAfter  time.Duration
	DegradeFactor int
	DegradeShare  float64
	// Seed seeds the fault-injection random source: runs with the same Seed
	// and the same arrival order inject the same faults. Default 0.
	Seed uint64

	// MetricsAddr, when set, serves the server's own metrics (workers busy,
	// queue length, commands served; see metrics.go) on
	// http://MetricsAddr/metrics ("127.0.0.1:0": a random port; see
	// IMAP.MetricsURL). Default: none.
	MetricsAddr string

	// OnConnect, if set, is called synchronously for every accepted
	// connection. It must be cheap.
	OnConnect func(remote net.Addr, at time.Time)
	// OnLogin, if set, is called synchronously after every successful
	// LOGIN. It must be cheap.
	OnLogin func(user string, remote net.Addr, at time.Time)
	// Logf receives go-imap's server log (connection errors). Default:
	// discarded.
	Logf func(format string, args ...any)
}

const (
	defaultUsers         = 10
	defaultUserFormat    = "user%d"
	defaultPassword      = "secret"
	defaultSeedMessages  = 5
	defaultMaxMessages   = 1000
	defaultLoginCacheTTL = time.Minute
)

// withDefaults returns a copy with every zero field set to its default.
func (o *IMAPOptions) withDefaults() IMAPOptions {
	var c IMAPOptions
	if o != nil {
		c = *o
	}
	c.Addr = orDefault(c.Addr, "127.0.0.1:0")
	c.UserFormat = orDefault(c.UserFormat, defaultUserFormat)
	c.Password = orDefault(c.Password, defaultPassword)
	if c.Users == 0 {
		c.Users = defaultUsers
	}
	if c.SeedMessages == 0 {
		c.SeedMessages = defaultSeedMessages
	}
	if c.MaxMessages == 0 {
		c.MaxMessages = defaultMaxMessages
	}
	if c.LoginCacheTTL == 0 {
		c.LoginCacheTTL = defaultLoginCacheTTL
	}
	return c
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// numbersNames reports whether format gives distinct, error-free names
// for distinct account numbers ("user%d", "lt%04d@example.org").
func numbersNames(format string) bool {
	one, two := fmt.Sprintf(format, 1), fmt.Sprintf(format, 2)
	return one != two && !strings.Contains(one, "%!")
}

// validate reports the first out-of-range option.
func (o *IMAPOptions) validate() error {
	switch {
	case o.Users < 0:
		return fmt.Errorf("%w: Users = %d", ErrBadOption, o.Users)
	case !numbersNames(o.UserFormat):
		return fmt.Errorf("%w: UserFormat %q must turn a number into a distinct name", ErrBadOption, o.UserFormat)
	case o.Workers < 0 || o.ServiceTime < 0 || o.SlowDelay < 0 || o.LoginCacheTTL < 0 || o.LoginDelay < 0:
		return fmt.Errorf("%w: negative Workers, ServiceTime, SlowDelay, LoginCacheTTL or LoginDelay", ErrBadOption)
	case o.DeliverWorkers < 0 || o.DeliverServiceTime < 0:
		return fmt.Errorf("%w: negative DeliverWorkers or DeliverServiceTime", ErrBadOption)
	case o.DegradeFor < 0 || o.DegradeAfter < 0 || o.DegradeFactor < 0 || !(o.DegradeShare >= 0 && o.DegradeShare <= 1):
		return fmt.Errorf("%w: negative DegradeFor, DegradeAfter or DegradeFactor, or DegradeShare outside [0, 1]", ErrBadOption)
	case o.TLS && o.StartTLS:
		return fmt.Errorf("%w: TLS and StartTLS together", ErrBadOption)
	case o.BcryptCost < 0 || o.BcryptCost > 31:
		return fmt.Errorf("%w: BcryptCost = %d, want 0–31", ErrBadOption, o.BcryptCost)
	}
	for name, f := range map[string]float64{"SlowFraction": o.SlowFraction,
		"DropFraction": o.DropFraction, "NoFraction": o.NoFraction,
		"RefuseSelect": o.RefuseSelect, "RefuseList": o.RefuseList} {
		if !(f >= 0 && f <= 1) {
			return fmt.Errorf("%w: %s = %v, want [0, 1]", ErrBadOption, name, f)
		}
	}
	return nil
}
