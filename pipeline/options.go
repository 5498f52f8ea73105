package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/observe"
	"github.com/imapload/imapload/producer"
	"github.com/imapload/imapload/ramp"
	"github.com/nats-io/nats.go"
)

// Options configure Run. Run, Ramp.Template and Ramp.Plan are required, and
// Producer when Producers > 0; every other zero field means its default.
type Options struct {
	// Run is the run id (messages.ValidName); it is the template's run.
	Run string
	// NATS is an existing server's URL list; "" starts an embedded NATS with
	// JetStream in this process.
	NATS string
	// NATSCreds and NATSOptions are the credentials and TLS of NATS (as
	// bus.Connect takes them); every role of this process uses them.
	NATSCreds   string
	NATSOptions []nats.Option
	// StoreDir keeps the embedded server's JetStream store (and, with
	// Listen, its credentials) in this directory; "" makes a temporary one,
	// removed when Run returns.
	StoreDir string
	// TempName names the temporary store, imapload-<TempName>-nats-* in
	// os.TempDir() (default "run").
	TempName string
	// Listen, when set, exposes the embedded server on host:port (port 0:
	// a free one) to producers on other hosts, with an NKey user per role
	// and nothing else admitted. Loopback or not, credentials are required.
	Listen string
	// Producers is how many producers run in this process, each with its
	// own NATS connection, ID <Run>-p<i> and seed i.
	Producers int
	// Producer is the local producers' template (Addr, TLS, Accounts,
	// sessions…); ID, Seed, Bus and Logger are set per producer.
	Producer producer.Options
	// ExpectProducers is how many producers from elsewhere Run waits for
	// before the first step, besides the local ones; with Listen a seed is
	// written for each (Endpoint.Remote), and at least one.
	ExpectProducers int
	// ProducerWait bounds the wait for the producers to register (default
	// 2 minutes: time to start the remote ones).
	ProducerWait time.Duration
	// Ramp drives the run: Template and Plan are required, Template.Run is
	// set to Run; Bus and Logger default to Run's.
	Ramp ramp.Options
	// Drive runs the ramp on nc, a connection of its own (default: the
	// ramp.Controller of o). A caller that draws progress passes its own.
	Drive func(ctx context.Context, nc *nats.Conn, o *ramp.Options) ([]messages.StepResult, error)
	// Threshold is the reporter's knee threshold (0: its default); OutDir
	// receives the reporter's files after every result ("" for none).
	Threshold float64
	OutDir    string
	// Observe, when set, runs an observer in this process that scrapes its
	// Endpoints during every step (the server's own figures beside the
	// results); its ID defaults to "local", its Bus and Logger to Run's.
	Observe *observe.Options
	// StepTimeout is the aggregator's (0: its default).
	StepTimeout time.Duration
	// Bus sizes the streams and bucket (nil: the defaults).
	Bus *bus.Options
	// Logger receives every role's log (default: discarded).
	Logger *slog.Logger
	// OnReady, if set, is called once NATS is up and the roles have
	// started, before Run waits for the producers: where others join.
	OnReady func(Endpoint)
}

// Endpoint is where the pipeline's NATS is and how producers join it.
type Endpoint struct {
	// URL is the server's client URL, without credentials; with Listen on
	// an unspecified address (0.0.0.0, ::) its host is this host's name.
	URL string
	// Embedded says whether the server runs in this process.
	Embedded bool
	// Credentials is the directory of the seeds and nats.conf (Listen only).
	Credentials string
	// Remote are the producer ids written for producers on other hosts,
	// each with its seed at bus.SeedFile(Credentials, id) (Listen only).
	Remote []string
	// Aggregator says whether Run started an aggregator: false when one
	// already consumed the batches on NATS.
	Aggregator bool
}

// Defaults of Options.
const (
	DefaultProducerWait = 2 * time.Minute
	defaultTempName     = "run"
	defaultObserver     = "local"
	maxPrefix           = 56 // of a local producer's id: its -p<i> fits in a name's 64 bytes
)

// config is Options with the defaults applied.
type config struct {
	Options
	local, remote []string // producer ids with seeds (remote: Listen only)
	host          string   // Listen's host and port (-1: a free one)
	port          int
}

func (o *Options) config() (*config, error) {
	if o == nil {
		return nil, fmt.Errorf("%w: options are required", ErrOptions)
	}
	c := &config{Options: *o}
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	c.setDefaults()
	prefix := c.Run[:min(len(c.Run), maxPrefix)]
	for i := 1; i <= c.Producers; i++ {
		c.local = append(c.local, prefix+"-p"+strconv.Itoa(i))
	}
	if c.Listen != "" {
		for i := 1; i <= max(c.ExpectProducers, 1); i++ {
			c.remote = append(c.remote, "remote-"+strconv.Itoa(i))
		}
	}
	return c, nil
}

func (c *config) setDefaults() {
	if c.TempName == "" {
		c.TempName = defaultTempName
	}
	if c.ProducerWait <= 0 {
		c.ProducerWait = DefaultProducerWait
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.Ramp.Template.Run = c.Run
	if c.Ramp.Bus == nil {
		c.Ramp.Bus = c.Bus
	}
	if c.Ramp.Logger == nil {
		c.Ramp.Logger = c.Logger
	}
	if c.Observe != nil {
		o := *c.Observe
		o.ID = cmp.Or(o.ID, defaultObserver)
		o.Bus = cmp.Or(o.Bus, c.Bus)
		o.Logger = cmp.Or(o.Logger, c.Logger)
		c.Observe = &o
	}
}

// observers are the ids of the observers run in this process.
func (c *config) observers() []string {
	if c.Observe == nil {
		return nil
	}
	return []string{c.Observe.ID}
}

// check refuses what cannot run, before anything is started.
func (c *config) check() error {
	switch {
	case messages.ValidName(c.Run) != nil:
		return fmt.Errorf("run %q: %w", c.Run, messages.ValidName(c.Run))
	case c.Producers < 0 || c.ExpectProducers < 0:
		return fmt.Errorf("producers %d, expected %d: want ≥ 0", c.Producers, c.ExpectProducers)
	case c.Producers == 0 && c.ExpectProducers == 0 && c.NATS == "" && c.Listen == "":
		return fmt.Errorf("no producer: run some here (Producers), or let others join (Listen, or NATS and ExpectProducers)")
	case c.Producers > 0 && (c.Producer.Addr == "" || len(c.Producer.Accounts) == 0):
		return fmt.Errorf("%d local producers: Producer needs Addr and Accounts", c.Producers)
	case c.NATS != "" && (c.Listen != "" || c.StoreDir != ""):
		return fmt.Errorf("NATS %q with Listen or StoreDir: those are the embedded server's", c.NATS)
	case c.Observe != nil && c.Observe.Check() != nil:
		return c.Observe.Check()
	}
	return c.checkListen()
}

func (c *config) checkListen() error {
	if c.Listen == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(c.Listen)
	p, perr := strconv.Atoi(port)
	if err != nil || perr != nil || p < 0 || p > 65535 {
		return fmt.Errorf("listen %q: want host:port (port 0: a free one)", c.Listen)
	}
	if p == 0 {
		p = -1 // a free port, as nats-server's RANDOM_PORT
	}
	c.host, c.port = host, p
	return nil
}
