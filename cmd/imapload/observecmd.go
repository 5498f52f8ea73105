package main

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/imapload/imapload/health"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/observe"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func observeCmd(g *globalFlags) *cobra.Command {
	c := &observeConfig{}
	return bind(&cobra.Command{
		Use:   "observe",
		Short: "Scrape the server's own metrics during every step and publish them beside the results",
		Long: `Runs beside the server under test, where its metrics endpoints are reachable (often on the
mail host itself): listens for step commands on imapload.step and, during each step's
measurement window, scrapes every --scrape endpoint each --interval. Per step it publishes
what it saw to the IMAPLOAD_SERVER stream: the host's CPU, load, memory, disk and network
from node_exporter, Dovecot's logins, authentication and IMAP command durations from its
OpenMetrics listener, the embedded server's workers, and any --metric as it is. The
aggregator attaches them to the step's result, and the report names the bottleneck.`,
		Example: `  imapload observe --nats nats://10.0.0.5:4222 \
    --scrape http://127.0.0.1:9100/metrics --scrape http://127.0.0.1:9900/metrics
  imapload observe --scrape http://127.0.0.1:9100/metrics --metric node_pressure_cpu_waiting_seconds_total`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runObserve(cmd, c, g.logger(cmd)) },
	}, c)
}

// observeConfig is the configuration of `imapload observe`.
type observeConfig struct {
	ID     string // --id; "" is the host name
	Scrape scrapeFlags
	NATS   natsConfig
	Health healthConfig
}

func (c *observeConfig) add(fs *pflag.FlagSet) {
	c.NATS.add(fs)
	c.Health.add(fs)
	fs.StringVar(&c.ID, "id", "", "observer id, in subjects and results (default the host name)")
	c.Scrape.add(fs)
}

func (c *observeConfig) validate() error {
	errs := append(c.Scrape.checks(), c.Health.check())
	if len(c.Scrape.URLs) == 0 {
		errs = append(errs, errors.New("--scrape is required: a metrics endpoint such as http://127.0.0.1:9100/metrics (node_exporter)"))
	}
	return flagErrors(c.NATS.checks(), errs)
}

// options are the observer's options of the flags.
func (c *observeConfig) options() *observe.Options {
	o := c.Scrape.options()
	o.ID, o.Bus = c.ID, c.NATS.bus()
	return o
}

// scrapeFlags are the flags of an observer's scrapes: `observe`'s, and
// `run`'s and `demo`'s for the observer they run in their process.
type scrapeFlags struct {
	URLs     []string      // --scrape endpoint URLs
	Metrics  []string      // --metric names kept as they are
	Interval time.Duration // --scrape-interval between scrapes
	Timeout  time.Duration // --scrape-timeout, 0 for the default
}

func (s *scrapeFlags) add(fs *pflag.FlagSet) {
	fs.StringArrayVar(&s.URLs, "scrape", nil, "metrics endpoint to scrape during every step, e.g. http://127.0.0.1:9100/metrics (node_exporter); repeat for more")
	fs.StringArrayVar(&s.Metrics, "metric", nil, "another metric to keep as it is, summed over its series; repeat for more")
	fs.DurationVar(&s.Interval, "scrape-interval", time.Second, "time between two scrapes of an endpoint")
	fs.DurationVar(&s.Timeout, "scrape-timeout", 0, "how long one scrape may take (default the interval, at least 1s)")
}

// checks returns the errors of the flags' values (none without --scrape).
func (s *scrapeFlags) checks() []error {
	errs := []error{checkDuration("scrape-interval", s.Interval), checkDuration("scrape-timeout", s.Timeout)}
	switch {
	case len(s.URLs) > messages.MaxEndpoints:
		errs = append(errs, fmt.Errorf("--scrape given %d times, at most %d", len(s.URLs), messages.MaxEndpoints))
	case len(s.URLs) > 0 && s.Interval >= 0 && s.Timeout >= 0:
		errs = append(errs, s.options().Check())
	}
	return errs
}

// options are an observer's options of the flags.
func (s *scrapeFlags) options() *observe.Options {
	return &observe.Options{Endpoints: s.URLs, Metrics: s.Metrics, Interval: s.Interval, Timeout: s.Timeout}
}

// observer is the in-process observer of run or demo: nil without an
// endpoint to scrape.
func (s *scrapeFlags) observer(extra ...string) *observe.Options {
	o := s.options()
	o.Endpoints = append(slices.Clip(o.Endpoints), extra...)
	if len(o.Endpoints) == 0 {
		return nil
	}
	return o
}

func runObserve(cmd *cobra.Command, c *observeConfig, log *slog.Logger) error {
	o := c.options()
	o.Logger = log
	nc, err := c.NATS.connect("imapload-observer")
	if err != nil {
		return err
	}
	defer nc.Close()
	ob, err := observe.New(nc, o)
	if err != nil {
		return err
	}
	stop, err := c.Health.start(cmd.Context(), &health.Options{Ready: natsReady(nc), Metrics: health.NewMetrics(nil)}, log)
	if err != nil {
		return err
	}
	defer stop()
	log.Info("observer: ready", "id", ob.ID(), "endpoints", len(c.Scrape.URLs))
	return ob.Run(cmd.Context())
}
