package main

import (
	"log/slog"
	"time"

	"github.com/imapload/imapload/aggregator"
	"github.com/imapload/imapload/health"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func aggregatorCmd(g *globalFlags) *cobra.Command {
	c := &aggregatorConfig{}
	return bind(&cobra.Command{
		Use:   "aggregator",
		Short: "Pool every producer's sample batches into one result per step",
		Long: `Consumes the IMAPLOAD_SAMPLES stream with a durable consumer, pools each step's batches
(merged sketches, count-weighted reservoirs, errors by kind) and publishes a StepResult
as JSON on imapload.results.<run> once every producer sent its final batch or the step
timed out. A restarted aggregator resumes where it left off.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runAggregator(cmd, c, g.logger(cmd)) },
	}, c)
}

// aggregatorConfig is the configuration of `imapload aggregator`.
type aggregatorConfig struct {
	StepTimeout time.Duration // --step-timeout past a step's end for missing final batches, 0 for the default
	Durable     string        // --durable consumer name, "" for the default
	NATS        natsConfig
	Health      healthConfig
}

func (c *aggregatorConfig) add(fs *pflag.FlagSet) {
	c.NATS.add(fs)
	c.Health.add(fs)
	fs.DurationVar(&c.StepTimeout, "step-timeout", 0, "wait past a step's end for missing final batches (default 15s)")
	fs.StringVar(&c.Durable, "durable", "", "durable consumer name (default imapload-aggregator)")
}

func (c *aggregatorConfig) validate() error {
	return flagErrors(c.NATS.checks(), []error{checkDuration("step-timeout", c.StepTimeout), c.Health.check()})
}

func runAggregator(cmd *cobra.Command, c *aggregatorConfig, log *slog.Logger) error {
	nc, err := c.NATS.connect("imapload-aggregator")
	if err != nil {
		return err
	}
	defer nc.Close()
	m := health.NewMetrics(nil)
	o := &aggregator.Options{Durable: c.Durable, StepTimeout: c.StepTimeout, Bus: c.NATS.bus(), Logger: log,
		OnResult: m.ObserveResult}
	a, err := aggregator.New(nc, o)
	if err != nil {
		return err
	}
	stop, err := c.Health.start(cmd.Context(), &health.Options{Ready: natsReady(nc), Metrics: m}, log)
	if err != nil {
		return err
	}
	defer stop()
	log.Info("aggregator: ready")
	return a.Run(cmd.Context())
}
