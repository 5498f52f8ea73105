package main

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func imapserverCmd(g *globalFlags) *cobra.Command {
	c := &imapServerConfig{Server: defaultIMAPServer()}
	return bind(&cobra.Command{
		Use:   "imapserver",
		Short: "Run the embedded test IMAP server (in-memory, with capacity, slow-backend, login-cost and fault knobs)",
		Example: `  imapload imapserver --users 100 --workers 4 --service-time 8ms
  imapload imapserver --users 100 --bcrypt-cost 8 --slow-fraction 0.05 --slow-delay 20ms --tls
  imapload imapserver --listen 127.0.0.1:1143 --starttls
  imapload imapserver --lmtp 127.0.0.1:2424 --deliver-workers 1 --deliver-service-time 20ms`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runIMAPServer(cmd, c, g.logger(cmd)) },
	}, c)
}

// imapServerConfig is the configuration of `imapload imapserver`.
type imapServerConfig struct {
	Listen   string // --listen: host:port
	LMTP     string // --lmtp: also serve LMTP on host:port, "" for none
	StartTLS bool   // --starttls: offer STARTTLS on the plain port
	Server   imapServerFlags
}

func (c *imapServerConfig) add(fs *pflag.FlagSet) {
	c.Server.add(fs)
	fs.BoolVar(&c.Server.TLS, "tls", false, "serve implicit TLS with a self-signed certificate")
	fs.BoolVar(&c.StartTLS, "starttls", false, "offer STARTTLS on the plain port, with a self-signed certificate (not with --tls; commands after STARTTLS are not gated)")
	fs.StringVar(&c.Listen, "listen", "127.0.0.1:1143", "address to listen on (host:port)")
	fs.StringVar(&c.LMTP, "lmtp", "", "also take mail by LMTP (RFC 2033) on this host:port, into the accounts' INBOXes (e.g. 127.0.0.1:2424)")
}

func (c *imapServerConfig) validate() error {
	return flagErrors(c.Server.checks(), []error{checkTLSMode(c.Server.TLS, c.StartTLS)})
}

// imapServerFlags are the knobs of the embedded IMAP server, which the
// imapserver command and the demo share. Each command declares --tls itself,
// with what it means there.
type imapServerFlags struct {
	Users         int           // --users: seeded accounts user1..userN
	Password      string        // --user-password of every seeded account; never logged
	Workers       int           // --workers: command slots, 0 for unlimited
	ServiceTime   time.Duration // --service-time each command holds a slot
	SlowFraction  float64       // --slow-fraction of accounts with a slow backend
	SlowDelay     time.Duration // --slow-delay: a slow account's extra latency per mailbox command
	BcryptCost    int           // --bcrypt-cost of a login cache miss, 0 for plain passwords
	LoginCacheTTL time.Duration // --login-cache-ttl, 0 for the default
	TLS           bool          // --tls: implicit TLS with a self-signed certificate
	DropFraction  float64       // --drop-fraction of connections dropped abruptly
	NoFraction    float64       // --no-fraction of mailbox commands answered NO
	MaxMessages   int           // --max-messages per mailbox, 0 for the default
	// DeliverWorkers and DeliverServiceTime are the LMTP deliveries' pool
	// (--deliver-workers, --deliver-service-time).
	DeliverWorkers     int
	DeliverServiceTime time.Duration
	RefuseSelect       float64       // --refuse-select: fraction of SELECTs answered NO
	RefuseList         float64       // --refuse-list: fraction of LISTs answered NO
	NoGreeting         bool          // --no-greeting: accept connections, never greet
	LoginDelay         time.Duration // --login-delay before every LOGIN is answered
	DegradeFor         time.Duration // --degrade-for: how long overload wears the server, 0 for never
	DegradeFactor      int           // --degrade-factor: how many times slower a worn server serves
	DegradeShare       float64       // --degrade-share of the pool's time busy that counts as overload
}

// defaultIMAPServer is the flags' defaults; add declares the flags with the
// receiver's values as defaults, so the demo can start from its own.
func defaultIMAPServer() imapServerFlags { return imapServerFlags{Users: 100, Password: "secret"} }

func (s *imapServerFlags) add(fs *pflag.FlagSet) {
	fs.IntVar(&s.Users, "users", s.Users, "seeded accounts user1..userN")
	secretVar(fs, &s.Password, "user-password", s.Password, "password of every seeded account; prefer --user-password-file or env IMAPLOAD_USER_PASSWORD, as ps shows flags (never logged)")
	fs.IntVar(&s.Workers, "workers", s.Workers, "command slots: capacity = workers / service-time (0: unlimited)")
	fs.DurationVar(&s.ServiceTime, "service-time", s.ServiceTime, "time each command holds a slot")
	fs.Float64Var(&s.SlowFraction, "slow-fraction", s.SlowFraction, "fraction of accounts (by hash) with a slow backend")
	fs.DurationVar(&s.SlowDelay, "slow-delay", s.SlowDelay, "extra latency of a slow account's mailbox commands")
	fs.IntVar(&s.BcryptCost, "bcrypt-cost", s.BcryptCost, "bcrypt cost of a login cache miss (0: plain passwords)")
	fs.DurationVar(&s.LoginCacheTTL, "login-cache-ttl", s.LoginCacheTTL, "how long a login is cached (default 1m)")
	fs.Float64Var(&s.DropFraction, "drop-fraction", s.DropFraction, "fraction of connections dropped abruptly")
	fs.Float64Var(&s.NoFraction, "no-fraction", s.NoFraction, "fraction of mailbox commands answered NO")
	fs.IntVar(&s.MaxMessages, "max-messages", s.MaxMessages, "messages kept per mailbox (default 1000)")
	fs.IntVar(&s.DeliverWorkers, "deliver-workers", s.DeliverWorkers, "LMTP delivery slots: delivery capacity = deliver-workers / deliver-service-time (0: unlimited)")
	fs.DurationVar(&s.DeliverServiceTime, "deliver-service-time", s.DeliverServiceTime, "time each LMTP delivery holds a delivery slot, after a command slot")
	fs.Float64Var(&s.RefuseSelect, "refuse-select", s.RefuseSelect, "fraction of SELECTs answered NO (1: no session ever opens INBOX)")
	fs.Float64Var(&s.RefuseList, "refuse-list", s.RefuseList, "fraction of LISTs answered NO")
	fs.BoolVar(&s.NoGreeting, "no-greeting", s.NoGreeting, "accept connections and never send the greeting (as a port speaking something else, or TLS)")
	fs.DurationVar(&s.LoginDelay, "login-delay", s.LoginDelay, "answer every LOGIN only after this long (a slow authentication backend)")
	fs.DurationVar(&s.DegradeFor, "degrade-for", s.DegradeFor, "with --workers: after a second of overload, serve sessions' commands --degrade-factor times slower for this long (0: never)")
	fs.IntVar(&s.DegradeFactor, "degrade-factor", s.DegradeFactor, "how many times slower a worn server serves (0: 4)")
	fs.Float64Var(&s.DegradeShare, "degrade-share", s.DegradeShare, "share of the slots' time busy over a second that counts as overload (0: 0.9)")
}

// checks returns the errors of the flags' values, nil for a good one.
func (s *imapServerFlags) checks() []error {
	return []error{
		checkInt("users", s.Users, atLeast(1)),
		checkInt("workers", s.Workers, atLeast(0)),
		checkDuration("service-time", s.ServiceTime),
		checkFloat("slow-fraction", s.SlowFraction, between(0, 1)),
		checkDuration("slow-delay", s.SlowDelay),
		checkInt("bcrypt-cost", s.BcryptCost, bcryptRule()),
		checkDuration("login-cache-ttl", s.LoginCacheTTL),
		checkFloat("drop-fraction", s.DropFraction, between(0, 1)),
		checkFloat("no-fraction", s.NoFraction, between(0, 1)),
		checkInt("max-messages", s.MaxMessages, atLeast(0)),
		checkInt("deliver-workers", s.DeliverWorkers, atLeast(0)),
		checkDuration("deliver-service-time", s.DeliverServiceTime),
		checkFloat("refuse-select", s.RefuseSelect, between(0, 1)),
		checkFloat("refuse-list", s.RefuseList, between(0, 1)),
		checkDuration("login-delay", s.LoginDelay),
		checkDuration("degrade-for", s.DegradeFor),
		checkInt("degrade-factor", s.DegradeFactor, atLeast(0)),
		checkFloat("degrade-share", s.DegradeShare, between(0, 1)),
	}
}

// options returns the server's options, listening on addr.
func (s *imapServerFlags) options(addr string) *embedded.IMAPOptions {
	return &embedded.IMAPOptions{
		Addr: addr, Users: s.Users, Password: s.Password,
		Workers: s.Workers, ServiceTime: s.ServiceTime, SlowFraction: s.SlowFraction, SlowDelay: s.SlowDelay,
		BcryptCost: s.BcryptCost, LoginCacheTTL: s.LoginCacheTTL, TLS: s.TLS,
		DropFraction: s.DropFraction, NoFraction: s.NoFraction, MaxMessages: s.MaxMessages,
		DeliverWorkers: s.DeliverWorkers, DeliverServiceTime: s.DeliverServiceTime,
		RefuseSelect: s.RefuseSelect, RefuseList: s.RefuseList, NoGreeting: s.NoGreeting, LoginDelay: s.LoginDelay,
		DegradeFor: s.DegradeFor, DegradeFactor: s.DegradeFactor, DegradeShare: s.DegradeShare,
	}
}

func runIMAPServer(cmd *cobra.Command, c *imapServerConfig, log *slog.Logger) error {
	o := c.Server.options(c.Listen)
	o.StartTLS, o.LMTPAddr = c.StartTLS, c.LMTP
	srv, err := embedded.StartIMAP(o)
	if err != nil {
		return err
	}
	defer srv.Close()
	capacity := "unlimited"
	if cp := srv.Capacity(); cp > 0 {
		capacity = fmt.Sprintf("%.0f commands/s", cp)
	}
	log.Info("imapserver: ready", "addr", srv.Addr(), "users", c.Server.Users, "capacity", capacity)
	fmt.Fprintf(cmd.OutOrStdout(), "IMAP test server listening on %s (%d users, capacity %s)\n", srv.Addr(), c.Server.Users, capacity)
	if a := srv.LMTPAddr(); a != "" {
		fmt.Fprintf(cmd.OutOrStdout(), "LMTP on %s\n", a)
	}
	<-cmd.Context().Done()
	return nil
}
