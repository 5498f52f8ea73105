package main

import (
	"errors"
	"log/slog"
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
publishing sample batches to the IMAPLOAD_SAMPLES stream. Scale the fleet by starting more.
At start one account logs in once, and a mistake in the IMAP flags is logged with its fix
(the producer keeps running: its server may not be up yet).`,
		Example: `  imapload producer --nats nats://10.0.0.5:4222 --imap mail.example.net:993 --tls \
    --accounts-file accounts.txt --sessions 64
  imapload producer --imap mail.example.net:143 --starttls --auth plain --accounts-file accounts.txt
  imapload producer --imap 127.0.0.1:143 --lmtp 127.0.0.1:24 --accounts-file accounts.txt
  IMAPLOAD_IMAP=127.0.0.1:1143 IMAPLOAD_ACCOUNTS_TEMPLATE=user%d IMAPLOAD_ACCOUNTS_COUNT=100 \
    IMAPLOAD_ACCOUNTS_PASSWORD_FILE=/run/secrets/imap-password imapload producer`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runProducer(cmd, c, g.logger(cmd)) },
	}, c)
}

// producerConfig is the configuration of `imapload producer`.
type producerConfig struct {
	ID    string // --id; "" is <hostname>-<pid>
	Procs int    // --procs: GOMAXPROCS, 0 for Go's default
	imapConnFlags
	NATS     natsConfig
	Producer producerFlags
	Deliver  deliverFlags
	Health   healthConfig
}

func (c *producerConfig) add(fs *pflag.FlagSet) {
	c.NATS.add(fs)
	c.Producer.add(fs)
	c.Deliver.add(fs)
	c.Health.add(fs)
	c.imapConnFlags.add(fs)
	fs.StringVar(&c.ID, "id", "", "producer id (default <hostname>-<pid>)")
	fs.IntVar(&c.Procs, "procs", 1, "GOMAXPROCS for this process (0: Go's default); one thread costs the least CPU per command, so run a producer per core")
}

func (c *producerConfig) validate() error {
	return errors.Join(
		flagErrors(c.NATS.checks(), c.Producer.checks(), c.Deliver.checks(), []error{checkInt("procs", c.Procs, atLeast(0)), c.Health.check(),
			checkTLSMode(c.TLS, c.StartTLS)}),
		checkIMAP(c.IMAP))
}

// producerFlags are the flags a producer and the demo share.
type producerFlags struct {
	accountFlags
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
	DeliverConns       int           // --deliver-conns: deliveries in flight, 0 for the default
	InboxTimeout       time.Duration // --inbox-timeout: how long a watched delivery may take to show, 0 for the default
}

func (p *producerFlags) add(fs *pflag.FlagSet) {
	p.accountFlags.add(fs)
	fs.IntVar(&p.Sessions, "sessions", 32, "IMAP sessions per producer")
	fs.IntVar(&p.SessionsPerAccount, "sessions-per-account", 2, "concurrent sessions of one account per producer")
	fs.IntVar(&p.Queue, "queue", 0, "commands waiting for a free session before drops (default 4 × sessions)")
	fs.DurationVar(&p.OpTimeout, "op-timeout", 0, "our own timeout of one IMAP operation (default 10s)")
	fs.DurationVar(&p.IdlePeriod, "idle-period", 0, "how often a held IDLE connection sends DONE and IDLE again, at most 29m (RFC 2177) (default 25m)")
	fs.DurationVar(&p.SaturationLag, "saturation-lag", 0, "schedule-lag P99 above which a producer counts as behind its schedule, voiding the step (default 20ms)")
	fs.DurationVar(&p.FlushInterval, "flush-interval", 0, "batch interval (default 1s)")
	fs.DurationVar(&p.PublishRetry, "publish-retry", 0, "how long, per NATS outage, unacknowledged batches are retried before they count as lost (default 2m; 5s while shutting down)")
	fs.IntVar(&p.Reservoir, "reservoir", 0, "latencies kept per phase and batch (default 1024)")
	authVar(fs, &p.Auth, "; both are timed as phase login")
	fs.StringVar(&p.DefaultMix, "default-mix", "", "workload when a step names none, e.g. fetch=130,select=100 (default imaptest-like)")
	fs.IntVar(&p.DeliverConns, "deliver-conns", 0, "deliveries (deliver_rate) in flight, each on a connection of its own (default 16)")
	fs.DurationVar(&p.InboxTimeout, "inbox-timeout", 0, "how long a delivery to an account with a held IDLE connection may take to show there before it counts as missing (default 30s)")
}

// checks returns the errors of the flags' values, nil for a good one.
func (p *producerFlags) checks() []error {
	return []error{
		p.accountFlags.check(),
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
		checkInt("deliver-conns", p.DeliverConns, atLeast(0)),
		checkDuration("inbox-timeout", p.InboxTimeout),
	}
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
		DeliverConns: p.DeliverConns, InboxTimeout: p.InboxTimeout,
	}, nil
}

func runProducer(cmd *cobra.Command, c *producerConfig, log *slog.Logger) error {
	if c.Procs > 0 {
		runtime.GOMAXPROCS(c.Procs)
	}
	tlsCfg, err := c.tlsConfig(log, "producer")
	if err != nil {
		return err
	}
	o, err := c.Producer.options(c.NATS.bus())
	if err != nil {
		return err
	}
	o.ID, o.Addr, o.LocalAddr = c.ID, c.IMAP, c.LocalAddr
	o.TLS, o.StartTLS, o.TLSConfig, o.Logger = c.TLS, c.StartTLS, tlsCfg, log
	if err := c.Deliver.apply(o, log); err != nil {
		return err
	}
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
	defer c.warnServer(cmd.Context(), tlsCfg, o.Auth, o.Accounts[0], log)()
	o.Logger.Info("producer: ready", "id", p.ID(), "imap", o.Addr, "accounts", len(o.Accounts))
	return p.Run(cmd.Context())
}
