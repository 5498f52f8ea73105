package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"time"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/health"
	"github.com/imapload/imapload/producer"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func producerCmd(g *globalFlags) *cobra.Command {
	c := &producerConfig{}
	return bind(&cobra.Command{
		Use:   "producer",
		Short: "Run a producer: offer IMAP load on step commands and publish what it measured",
		Long: `Registers in the imapload_producers bucket, listens for step commands on imapload.step and,
for each, runs staggered open-loop IMAP sessions against --imap at its share of the rate,
publishing sample batches to the IMAPLOAD_SAMPLES stream. Scale the fleet by starting more.`,
		Example: `  imapload producer --nats nats://10.0.0.5:4222 --imap mail.example.net:993 --tls \
    --accounts-file accounts.txt --sessions 64
  imapload producer --imap mail.example.net:143 --starttls --auth plain --accounts-file accounts.txt
  IMAPLOAD_IMAP=127.0.0.1:1143 IMAPLOAD_ACCOUNTS_TEMPLATE=user%d IMAPLOAD_ACCOUNTS_COUNT=100 \
    IMAPLOAD_ACCOUNTS_PASSWORD_FILE=/run/secrets/imap-password imapload producer`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runProducer(cmd, c, g.logger(cmd)) },
	}, c)
}

// producerConfig is the configuration of `imapload producer`.
type producerConfig struct {
	ID          string // --id; "" is <hostname>-<pid>
	IMAP        string // --imap: the server's host:port
	TLS         bool   // --tls: implicit TLS
	StartTLS    bool   // --starttls: plain TCP upgraded by STARTTLS
	TLSCA       string // --tls-ca: PEM file of the CA to trust, "" for the system roots
	TLSInsecure bool   // --tls-insecure: no certificate check (test servers only)
	LocalAddr   string // --local-addr: source IP of every dial
	Procs       int    // --procs: GOMAXPROCS, 0 for Go's default
	NATS        natsConfig
	Producer    producerFlags
	Health      healthConfig
}

func (c *producerConfig) add(fs *pflag.FlagSet) {
	c.NATS.add(fs)
	c.Producer.add(fs)
	c.Health.add(fs)
	fs.StringVar(&c.ID, "id", "", "producer id (default <hostname>-<pid>)")
	fs.StringVar(&c.IMAP, "imap", "", "IMAP server host:port (required)")
	fs.BoolVar(&c.TLS, "tls", false, "implicit TLS (IMAPS)")
	fs.BoolVar(&c.StartTLS, "starttls", false, "dial plain TCP and upgrade with STARTTLS after the greeting (not with --tls)")
	fs.StringVar(&c.TLSCA, "tls-ca", "", "PEM file of the CA to trust for --tls or --starttls (default: system roots)")
	fs.BoolVar(&c.TLSInsecure, "tls-insecure", false, "with --tls or --starttls, do not verify the server certificate: anyone on the path can read the passwords (test servers only)")
	fs.StringVar(&c.LocalAddr, "local-addr", "", "source IP for every dial")
	fs.IntVar(&c.Procs, "procs", 1, "GOMAXPROCS for this process (0: Go's default); one thread costs the least CPU per command, so run a producer per core")
}

func (c *producerConfig) validate() error {
	return errors.Join(
		flagErrors(c.NATS.checks(), c.Producer.checks(), []error{checkInt("procs", c.Procs, atLeast(0)), c.Health.check(),
			checkTLSMode(c.TLS, c.StartTLS)}),
		checkIMAP(c.IMAP))
}

// checkTLSMode refuses both TLS modes at once.
func checkTLSMode(implicit, startTLS bool) error {
	if implicit && startTLS {
		return errors.New("--tls and --starttls: choose one (--tls for an IMAPS port such as 993, --starttls for a plain port such as 143)")
	}
	return nil
}

// checkAuth checks --auth against the producer's login methods.
func checkAuth(method string) error {
	if method != producer.AuthLogin && method != producer.AuthPlain {
		return fmt.Errorf("--auth %q: want %s (LOGIN) or %s (AUTHENTICATE PLAIN)", method, producer.AuthLogin, producer.AuthPlain)
	}
	return nil
}

// producerFlags are the flags a producer and the demo share.
type producerFlags struct {
	AccountsFile       string        // --accounts-file of user:password lines
	AccountsTemplate   string        // --accounts-template, numbered from 1 (without AccountsFile)
	AccountsCount      int           // --accounts-count made from the template
	AccountsPassword   string        // --accounts-password of template accounts; never logged
	Sessions           int           // --sessions per producer
	SessionsPerAccount int           // --sessions-per-account, concurrent, per producer
	Queue              int           // --queue: commands waiting for a session, 0 for the default
	OpTimeout          time.Duration // --op-timeout, 0 for the default
	IdlePeriod         time.Duration // --idle-period of held connections, 0 for the default
	SaturationLag      time.Duration // --saturation-lag, 0 for the default
	FlushInterval      time.Duration // --flush-interval, 0 for the default
	PublishRetry       time.Duration // --publish-retry, 0 for the default
	Reservoir          int           // --reservoir: latencies kept per phase and batch, 0 for the default
	DefaultMix         string        // --default-mix: workload of a step that names none
	Auth               string        // --auth: login or plain
}

func (p *producerFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&p.AccountsFile, "accounts-file", "", "file of user:password lines")
	fs.StringVar(&p.AccountsTemplate, "accounts-template", "user%d", "account name template, numbered from 1 (without --accounts-file)")
	fs.IntVar(&p.AccountsCount, "accounts-count", 100, "accounts made from the template")
	secretVar(fs, &p.AccountsPassword, "accounts-password", "secret", "password of template accounts; prefer --accounts-password-file or env IMAPLOAD_ACCOUNTS_PASSWORD, as ps shows flags (never logged)")
	fs.IntVar(&p.Sessions, "sessions", 32, "IMAP sessions per producer")
	fs.IntVar(&p.SessionsPerAccount, "sessions-per-account", 2, "concurrent sessions of one account per producer")
	fs.IntVar(&p.Queue, "queue", 0, "commands waiting for a free session before drops (default 4 × sessions)")
	fs.DurationVar(&p.OpTimeout, "op-timeout", 0, "our own timeout of one IMAP operation (default 10s)")
	fs.DurationVar(&p.IdlePeriod, "idle-period", 0, "how often a held IDLE connection sends DONE and IDLE again, at most 29m (RFC 2177) (default 25m)")
	fs.DurationVar(&p.SaturationLag, "saturation-lag", 0, "schedule-lag P99 above which a producer counts as behind its schedule, voiding the step (default 20ms)")
	fs.DurationVar(&p.FlushInterval, "flush-interval", 0, "batch interval (default 1s)")
	fs.DurationVar(&p.PublishRetry, "publish-retry", 0, "how long, per NATS outage, unacknowledged batches are retried before they count as lost (default 2m; 5s while shutting down)")
	fs.IntVar(&p.Reservoir, "reservoir", 0, "latencies kept per phase and batch (default 1024)")
	fs.StringVar(&p.Auth, "auth", producer.AuthLogin, "how sessions log in: login (LOGIN) or plain (AUTHENTICATE PLAIN); both are timed as phase login")
	fs.StringVar(&p.DefaultMix, "default-mix", "", "workload when a step names none, e.g. fetch=130,select=100 (default imaptest-like)")
}

// checks returns the errors of the flags' values, nil for a good one.
func (p *producerFlags) checks() []error {
	return []error{
		checkInt("accounts-count", p.AccountsCount, atLeast(1)),
		checkInt("sessions", p.Sessions, atLeast(1)),
		checkInt("sessions-per-account", p.SessionsPerAccount, atLeast(1)),
		checkInt("queue", p.Queue, atLeast(0)),
		checkDuration("op-timeout", p.OpTimeout),
		checkDuration("idle-period", p.IdlePeriod),
		checkDuration("saturation-lag", p.SaturationLag),
		checkDuration("flush-interval", p.FlushInterval),
		checkDuration("publish-retry", p.PublishRetry),
		checkInt("reservoir", p.Reservoir, atLeast(0)),
		checkAuth(p.Auth),
	}
}

func (p *producerFlags) accounts() ([]producer.Account, error) {
	if p.AccountsFile != "" {
		f, err := os.Open(p.AccountsFile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return producer.ParseAccounts(f)
	}
	return producer.TemplateAccounts(p.AccountsTemplate, p.AccountsCount, p.AccountsPassword)
}

// options returns the producer options of the flags; b sizes the streams
// (nil: the defaults). It reads the accounts file.
func (p *producerFlags) options(b *bus.Options) (*producer.Options, error) {
	accts, err := p.accounts()
	if err != nil {
		return nil, err
	}
	mix, err := parseMix(p.DefaultMix)
	if err != nil {
		return nil, err
	}
	return &producer.Options{
		Accounts: accts, Mix: mix, Bus: b,
		Sessions: p.Sessions, SessionsPerAccount: p.SessionsPerAccount, Queue: p.Queue,
		OpTimeout: p.OpTimeout, IdlePeriod: p.IdlePeriod, SaturationLag: p.SaturationLag, FlushInterval: p.FlushInterval,
		PublishRetry: p.PublishRetry, Reservoir: p.Reservoir, Auth: p.Auth,
	}, nil
}

// tlsConfig returns the configuration of --tls or --starttls, nil without
// either. --tls-ca and --tls-insecure without them would be ignored in
// silence, so they are usage errors; --tls-insecure is warned about at every
// start.
func (c *producerConfig) tlsConfig(log *slog.Logger) (*tls.Config, error) {
	encrypted := c.TLS || c.StartTLS
	switch {
	case !encrypted && c.TLSInsecure:
		return nil, usage(errors.New("--tls-insecure needs --tls or --starttls: it turns off the certificate check of TLS connections"))
	case !encrypted && c.TLSCA != "":
		return nil, usage(errors.New("--tls-ca needs --tls or --starttls: it names the CA of TLS connections"))
	case !encrypted:
		return nil, nil
	case c.TLSInsecure:
		log.Warn("producer: --tls-insecure: the IMAP server's certificate is NOT verified; anyone on the network path can " +
			"impersonate the server and read every account's password. Use it for test servers only; --tls-ca trusts a private CA")
	}
	cfg := &tls.Config{InsecureSkipVerify: c.TLSInsecure} //nolint:gosec // an explicit flag for test servers, warned about
	var err error
	cfg.RootCAs, err = caPool(c.TLSCA)
	return cfg, err
}

// caPool returns the certificates of the PEM file path, nil (the system
// roots) if path is "".
func caPool(path string) (*x509.CertPool, error) {
	if path == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--tls-ca %s: no PEM certificate", path)
	}
	return pool, nil
}

func runProducer(cmd *cobra.Command, c *producerConfig, log *slog.Logger) error {
	if c.Procs > 0 {
		runtime.GOMAXPROCS(c.Procs)
	}
	tlsCfg, err := c.tlsConfig(log)
	if err != nil {
		return err
	}
	o, err := c.Producer.options(c.NATS.bus())
	if err != nil {
		return err
	}
	o.ID, o.Addr, o.LocalAddr = c.ID, c.IMAP, c.LocalAddr
	o.TLS, o.StartTLS, o.TLSConfig, o.Logger = c.TLS, c.StartTLS, tlsCfg, log
	nc, err := c.NATS.connect("imapload-producer")
	if err != nil {
		return err
	}
	defer nc.Close()
	m := health.NewMetrics(nil)
	o.OnBatch = m.ObserveBatch
	p, err := producer.New(nc, o)
	if err != nil {
		return err
	}
	stop, err := c.Health.start(cmd.Context(), &health.Options{Ready: natsReady(nc), Metrics: m}, log)
	if err != nil {
		return err
	}
	defer stop()
	o.Logger.Info("producer: ready", "id", p.ID(), "imap", o.Addr, "accounts", len(o.Accounts))
	return p.Run(cmd.Context())
}
