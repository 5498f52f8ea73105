package producer

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/internal/mailgen"
	"github.com/imapload/imapload/messages"
)

// Options configure a Producer. Addr and Accounts are required; every other
// zero field means its default.
type Options struct {
	// ID names the producer: its registry key and the last token of its
	// sample subjects (messages.ValidName). Default "<hostname>-<pid>" with
	// characters outside [A-Za-z0-9_-] replaced by '-'.
	ID string
	// Addr is the IMAP server, "host:port". Required.
	Addr string
	// TLS dials implicit TLS (IMAPS, RFC 8314) with TLSConfig (default: the
	// system roots and Addr's host as server name).
	TLS       bool
	TLSConfig *tls.Config
	// StartTLS dials plain TCP and, after the greeting, upgrades with
	// STARTTLS (RFC 9051 §6.2.1) using TLSConfig as TLS does. It excludes
	// TLS. The dial phase covers TCP, greeting, STARTTLS and handshake.
	StartTLS bool
	// Auth is how sessions log in: "login" (LOGIN, the default) or "plain"
	// (AUTHENTICATE PLAIN, RFC 4616). Either is recorded as phase login.
	Auth string
	// Accounts are the logins sessions draw from. Required.
	Accounts []Account
	// Sessions is how many IMAP sessions this producer keeps open during a
	// step (default 32). It is capped at len(Accounts)·SessionsPerAccount.
	Sessions int
	// SessionsPerAccount caps one account's concurrent sessions within this
	// producer (default 2).
	SessionsPerAccount int
	// Queue bounds the commands waiting for a free session (default
	// 4·Sessions). A command that finds it full is dropped by the generator.
	Queue int
	// OpTimeout is the producer's own limit on one operation (a dial, a
	// command); on expiry it closes the connection and records a timeout
	// (default 10 s).
	OpTimeout time.Duration
	// IdlePeriod is how long a held connection idles before it ends IDLE
	// with DONE and starts it again (default 25 min; RFC 2177 asks clients
	// to do so at least every 29 minutes, before servers log them out as
	// inactive). At most 29 min; tests shorten it.
	IdlePeriod time.Duration
	// SaturationLag is the schedule-lag P99 above which a batch says the
	// producer fell behind its schedule (default 20 ms; see recorder.Options).
	SaturationLag time.Duration
	// FlushInterval is how often a running step's batch is cut and published
	// (default 1 s).
	FlushInterval time.Duration
	// PublishRetry is how long, per NATS outage, batches not acknowledged
	// are kept and published again with their message ids before they count
	// as lost (default 2 min: an outage of a minute loses nothing). Once
	// Run's context ends, a step's batches get 5 s more whatever this is,
	// so that a stop with NATS down for good stays short.
	PublishRetry time.Duration
	// Reservoir is the reservoir capacity per phase and latency kind (default
	// 1024, at most 8192 so that a batch always fits messages.MaxBatchBytes).
	Reservoir int
	// Mix is the workload (weights by phase name) when a step command names
	// none (default messages.DefaultMix()).
	Mix map[string]float64
	// LocalAddr, if set, is the source IP of every dial (no port).
	LocalAddr string
	// Heartbeat is how often the registry entry is re-put (default 2 s, and
	// below the bucket's TTL).
	Heartbeat time.Duration
	// Bus sizes the streams and bucket the producer ensures exist.
	Bus *bus.Options
	// Logger receives the producer's log (default: discarded). Passwords and
	// NATS credentials are never logged.
	Logger *slog.Logger
	// Seed makes account order, command mix, arrivals and jitter repeatable
	// (default: random).
	Seed uint64
	// LMTPAddr is where deliveries go by LMTP (RFC 2033), "host:port";
	// SMTPAddr by SMTP (RFC 5321) instead. At most one; without either the
	// producer refuses a step with a deliver_rate.
	LMTPAddr string
	SMTPAddr string
	// SMTPTLS dials SMTPAddr over implicit TLS (submissions, RFC 8314,
	// port 465); SMTPStartTLS upgrades a plain connection with STARTTLS
	// (RFC 3207, port 587). Both use SMTPTLSConfig (default: the system
	// roots and SMTPAddr's host as server name). At most one; neither
	// applies to LMTP, which is spoken on a trusted local network.
	SMTPTLS       bool
	SMTPStartTLS  bool
	SMTPTLSConfig *tls.Config
	// SMTPUser and SMTPPassword, when SMTPUser is set, authenticate every
	// SMTP delivery with AUTH PLAIN (RFC 4954, RFC 4616) after the hello,
	// as a submission server requires. The password is never logged.
	SMTPUser     string
	SMTPPassword string
	// DeliverConns bounds the deliveries in flight, each over a connection
	// of its own (default 16); DeliverQueue the deliveries waiting for one
	// (default 4·DeliverConns), beyond which, or after a second's wait for a
	// connection, a delivery is dropped by the generator.
	DeliverConns int
	DeliverQueue int
	// DeliverSizes is the size table of delivered messages
	// (mailgen.ParseSizes; default mailgen.DefaultSizes, seed's).
	DeliverSizes string
	// DeliverDomain is the domain of a recipient whose account name has
	// none (default "example.org", as seed's To: headers).
	DeliverDomain string
	// InboxTimeout is how long after its end of DATA a delivery to an
	// account with a held connection may take to show there before it
	// counts as missing (default 30 s; at the step's end, at most the
	// OpTimeout of its drain).
	InboxTimeout time.Duration
	// OnBatch, if set, is called with every batch the producer cuts, before
	// it is published (e.g. to expose it as metrics). It runs on the step's
	// flush path: it must be quick, and must neither keep nor modify the
	// batch.
	OnBatch func(*messages.SampleBatch)
}

// The login methods of Options.Auth.
const (
	AuthLogin = "login" // LOGIN (RFC 9051 §6.2.3)
	AuthPlain = "plain" // AUTHENTICATE PLAIN (RFC 9051 §6.2.2, RFC 4616)
)

// Re-IDLE period of held connections (Options.IdlePeriod).
const (
	defaultIdlePeriod = 25 * time.Minute
	maxIdlePeriod     = 29 * time.Minute
)

// maxReservoir bounds Options.Reservoir: 8 phases × 2 latency kinds (plus
// TLS) × 8192 values × at most 5 bytes stays well under 1 MiB.
const maxReservoir = 8192

// config is Options with every default applied and checked.
type config struct {
	Options
	mix       mix
	sizes     mailgen.Sizes // of delivered messages
	localAddr net.Addr
	local     bool // Addr is this host's own (see localTarget)
	sessions  int  // effective: capped by the account pool
	secrets   []string
}

func (o *Options) config() (*config, error) {
	var c config
	if o != nil {
		c.Options = *o
	}
	c.setDefaults()
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadOptions, err)
	}
	m, err := newMix(c.Mix)
	if err != nil {
		return nil, err
	}
	c.mix = m
	c.local = localTarget(c.Addr)
	if c.sizes, err = mailgen.ParseSizes(c.DeliverSizes); err != nil {
		return nil, fmt.Errorf("%w: DeliverSizes: %w", ErrBadOptions, err)
	}
	c.sessions = min(c.Sessions, len(c.Accounts)*c.SessionsPerAccount)
	c.secrets = passwords(c.Accounts)
	if c.SMTPPassword != "" {
		c.secrets = append(c.secrets, c.SMTPPassword)
	}
	return &c, nil
}

func (c *config) setDefaults() {
	c.ID = orString(c.ID, defaultID)
	c.Sessions = orInt(c.Sessions, 32)
	c.SessionsPerAccount = orInt(c.SessionsPerAccount, 2)
	c.Queue = orInt(c.Queue, 4*c.Sessions)
	c.OpTimeout = orDuration(c.OpTimeout, 10*time.Second)
	c.FlushInterval = orDuration(c.FlushInterval, time.Second)
	c.IdlePeriod = orDuration(c.IdlePeriod, defaultIdlePeriod)
	c.PublishRetry = orDuration(c.PublishRetry, 2*time.Minute)
	c.Reservoir = orInt(c.Reservoir, 1024)
	c.DeliverConns = orInt(c.DeliverConns, 16)
	c.DeliverQueue = orInt(c.DeliverQueue, 4*c.DeliverConns)
	c.DeliverSizes = orString(c.DeliverSizes, func() string { return mailgen.DefaultSizes })
	c.DeliverDomain = orString(c.DeliverDomain, func() string { return "example.org" })
	c.InboxTimeout = orDuration(c.InboxTimeout, 30*time.Second)
	c.Auth = orString(c.Auth, func() string { return AuthLogin })
	c.Heartbeat = orDuration(c.Heartbeat, min(2*time.Second, c.Bus.TTL()/3))
	if c.Mix == nil {
		c.Mix = messages.DefaultMix()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// check lists every problem at once.
func (c *config) check() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if err := messages.ValidName(c.ID); err != nil {
		bad("ID: %v", err)
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		bad("Addr %q: want host:port (%v)", c.Addr, err)
	}
	if len(c.Accounts) == 0 {
		bad("Accounts: none")
	}
	if c.TLS && c.StartTLS {
		bad("TLS and StartTLS: choose one")
	}
	if c.LMTPAddr != "" && c.SMTPAddr != "" {
		bad("LMTPAddr and SMTPAddr: choose one")
	}
	c.checkSMTP(bad)
	for name, a := range map[string]string{"LMTPAddr": c.LMTPAddr, "SMTPAddr": c.SMTPAddr} {
		if _, _, err := net.SplitHostPort(a); a != "" && err != nil {
			bad("%s %q: want host:port (%v)", name, a, err)
		}
	}
	if c.Auth != AuthLogin && c.Auth != AuthPlain {
		bad("Auth %q: want %q or %q", c.Auth, AuthLogin, AuthPlain)
	}
	for name, v := range map[string]int{"Sessions": c.Sessions, "SessionsPerAccount": c.SessionsPerAccount,
		"Queue": c.Queue, "Reservoir": c.Reservoir, "DeliverConns": c.DeliverConns, "DeliverQueue": c.DeliverQueue} {
		if v < 0 {
			bad("%s: %d is negative", name, v)
		}
	}
	for name, d := range map[string]time.Duration{"OpTimeout": c.OpTimeout, "SaturationLag": c.SaturationLag,
		"FlushInterval": c.FlushInterval, "IdlePeriod": c.IdlePeriod, "Heartbeat": c.Heartbeat, "PublishRetry": c.PublishRetry,
		"InboxTimeout": c.InboxTimeout} {
		if d < 0 {
			bad("%s: %v is negative", name, d)
		}
	}
	if c.Reservoir > maxReservoir {
		bad("Reservoir: %d, at most %d so that a batch fits in %d bytes", c.Reservoir, maxReservoir, messages.MaxBatchBytes)
	}
	if c.IdlePeriod > maxIdlePeriod {
		bad("IdlePeriod %v: at most %v (RFC 2177)", c.IdlePeriod, maxIdlePeriod)
	}
	if c.Heartbeat >= c.Bus.TTL() {
		bad("Heartbeat %v: want less than the registry TTL %v", c.Heartbeat, c.Bus.TTL())
	}
	c.checkLocalAddr(bad)
	return errors.Join(errs...)
}

// checkSMTP refuses SMTP's encryption and login where they cannot apply.
func (c *config) checkSMTP(bad func(string, ...any)) {
	smtpOnly := map[string]bool{"SMTPTLS": c.SMTPTLS, "SMTPStartTLS": c.SMTPStartTLS, "SMTPUser": c.SMTPUser != ""}
	for name, set := range smtpOnly {
		if set && c.SMTPAddr == "" {
			bad("%s: needs SMTPAddr (LMTP has neither TLS nor AUTH here)", name)
		}
	}
	if c.SMTPTLS && c.SMTPStartTLS {
		bad("SMTPTLS and SMTPStartTLS: choose one")
	}
	if c.SMTPPassword != "" && c.SMTPUser == "" {
		bad("SMTPPassword: needs SMTPUser")
	}
}

func (c *config) checkLocalAddr(bad func(string, ...any)) {
	if c.LocalAddr == "" {
		return
	}
	ip := net.ParseIP(c.LocalAddr)
	if ip == nil {
		bad("LocalAddr %q: want an IP address", c.LocalAddr)
		return
	}
	c.localAddr = &net.TCPAddr{IP: ip}
}

// passwords lists the distinct passwords, for the recorder to scrub.
func passwords(accts []Account) []string {
	seen := map[string]bool{}
	var out []string
	for _, a := range accts {
		if a.Password != "" && !seen[a.Password] {
			seen[a.Password] = true
			out = append(out, a.Password)
		}
	}
	return out
}

// defaultID is "<hostname>-<pid>", made a valid subject token.
func defaultID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "producer"
	}
	return sanitizeID(host + "-" + strconv.Itoa(os.Getpid()))
}

// sanitizeID replaces characters outside [A-Za-z0-9_-] with '-' and keeps the
// last 64 bytes (the pid end is the distinctive one).
func sanitizeID(s string) string {
	b := []byte(s)
	for i, ch := range b {
		if !(ch == '-' || ch == '_' || ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z') {
			b[i] = '-'
		}
	}
	if len(b) > 64 {
		b = b[len(b)-64:]
	}
	return string(b)
}

func orString(s string, def func() string) string {
	if s == "" {
		return def()
	}
	return s
}

func orInt(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func orDuration(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
