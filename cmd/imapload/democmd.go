package main

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/pipeline"
	"github.com/imapload/imapload/ramp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func demoCmd(g *globalFlags) *cobra.Command {
	c := newDemoConfig()
	return bind(&cobra.Command{
		Use:   "demo",
		Short: "Run the whole pipeline in one process against the embedded IMAP server",
		Long: `Starts an embedded NATS server with JetStream (temporary store), the embedded IMAP server
(capacity 667 commands/s, a slow backend on 5% of the accounts, bcrypt logins with a
short cache), three producers sharing one account pool, the aggregator, the reporter and
the ramp controller; doubles the offered rate from --start until one step past the knee,
with live progress, then prints the table, the knee and the findings and writes the
report files to --out. The server also takes mail by LMTP: --deliver-rate N delivers N
messages/s beside the commands (--profile desktop or mobile: their rate per account),
and --deliver-workers/--deliver-service-time give deliveries a capacity of their own.`,
		Example: `  go run ./cmd/imapload demo
  go run ./cmd/imapload demo --step-duration 5s --rates 200,400,800 --out /tmp/report
  go run ./cmd/imapload demo --connections 20,40 --rate 200 --deliver-rate 20`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDemo(cmd, c, g) },
	}, c)
}

// demoConfig is the configuration of `imapload demo`.
type demoConfig struct {
	Producers int // --producers to run in this process
	Ramp      rampFlags
	Producer  producerFlags
	Server    imapServerFlags
	Term      termFlags
	Scrape    scrapeFlags
}

// newDemoConfig returns the demo's defaults. The server's knobs put the knee
// inside the default ramp: 2 workers × 3 ms is 667 commands/s, so 400/s
// holds and 800/s does not (set-up commands add about a tenth to the
// scheduled rate).
func newDemoConfig() *demoConfig {
	c := &demoConfig{Ramp: defaultRamp(), Server: defaultIMAPServer()}
	c.Ramp.Out, c.Ramp.StepDuration, c.Ramp.Max = "imapload-report", 8*time.Second, 3200
	s := &c.Server
	s.Workers, s.ServiceTime, s.SlowFraction, s.SlowDelay = 2, 3*time.Millisecond, 0.05, 30*time.Millisecond
	s.BcryptCost, s.LoginCacheTTL = 7, 5*time.Second
	return c
}

func (c *demoConfig) add(fs *pflag.FlagSet) {
	c.Ramp.add(fs)
	c.Producer.add(fs)
	c.Server.add(fs)
	c.Term.add(fs)
	c.Scrape.add(fs)
	fs.BoolVar(&c.Server.TLS, "tls", false, "serve implicit TLS with a self-signed certificate, which the demo's producers dial and trust")
	fs.IntVar(&c.Producers, "producers", 3, "producers to run in this process")
}

func (c *demoConfig) validate() error {
	return errors.Join(
		flagErrors(c.Ramp.checks(), c.Producer.checks(), c.Server.checks(),
			c.Scrape.checks(), []error{checkInt("producers", c.Producers, atLeast(1)), c.Term.check()}),
		checkOut(c.Ramp.Out))
}

// demo timing: its aggregator closes a step 10 s past its end without the
// missing batches, and the ramp waits 30 s for a result.
const (
	demoStepTimeout = 10 * time.Second
	demoResultWait  = 30 * time.Second
)

// runDemo is `imapload run` against the embedded IMAP server: the same
// pipeline (runPipeline), then what the server was set to beside what the
// run found.
func runDemo(cmd *cobra.Command, c *demoConfig, g *globalFlags) error {
	run := runID("auto", "demo")
	ro, err := rampOptions(&c.Ramp, run, demoResultWait)
	if err != nil {
		return err
	}
	crit, err := c.Ramp.criteria()
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	tty := c.Term.tty(out)
	log, closeLog, err := c.Term.logger(cmd, g.LogLevel, tty)
	if err != nil {
		return err
	}
	defer closeLog()
	so := c.Server.options("127.0.0.1:0")
	so.MetricsAddr = "127.0.0.1:0" // its own figures, which the demo's observer scrapes
	so.LMTPAddr = "127.0.0.1:0"    // always on: --deliver-rate (or a profile's) needs nothing else
	srv, err := embedded.StartIMAP(so)
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Fprintf(out, "embedded IMAP server on %s, capacity %.0f commands/s; LMTP on %s\n", srv.Addr(), srv.Capacity(), srv.LMTPAddr())
	o, err := c.pipelineOptions(run, srv, log)
	if err != nil {
		return err
	}
	if err := stepDeliveries(&ro.Template, c.Ramp.Shape.DeliverRate, "LMTP", c.Producers, len(o.Producer.Accounts)); err != nil {
		return err
	}
	o.OnReady = func(e pipeline.Endpoint) { printEndpoint(out, cmd.Flags(), e, srv.Addr()) }
	o.Ramp = ro
	c.plan(run, srv, ro, len(o.Producer.Accounts)).write(out)
	report, err := runPipeline(cmd.Context(), out, o, crit, &c.Ramp, tty)
	if report == nil {
		return err
	}
	printDemoFindings(out, *report, demoSetup{capacity: srv.Capacity(), bcryptCost: c.Server.BcryptCost,
		slowFraction: c.Server.SlowFraction, slowDelay: c.Server.SlowDelay})
	return errors.Join(verdictError(*report), err)
}

// pipelineOptions are the demo's pipeline: its producers dial srv (over
// TLS with --tls, trusting the server's own certificate), on an embedded
// NATS with a temporary store.
func (c *demoConfig) pipelineOptions(run string, srv *embedded.IMAP, log *slog.Logger) (*pipeline.Options, error) {
	po, err := c.Producer.options(nil)
	if err != nil {
		return nil, usage(err)
	}
	po.Addr, po.LMTPAddr = srv.Addr(), srv.LMTPAddr()
	if cfg := srv.TLSConfig(); cfg != nil {
		po.TLS, po.TLSConfig = true, cfg
	}
	return &pipeline.Options{Run: run, TempName: "demo", Producers: c.Producers, Producer: *po,
		Threshold: c.Ramp.Threshold, OutDir: c.Ramp.Out, StepTimeout: demoStepTimeout, Logger: log,
		Observe: c.Scrape.observer(srv.MetricsURL())}, nil
}

// plan is the demo's plan: its own server, its accounts, its producers.
func (c *demoConfig) plan(run string, srv *embedded.IMAP, ro ramp.Options, accounts int) runPlan {
	tls := "no TLS (--tls serves TLS with a self-signed certificate)"
	if srv.TLSConfig() != nil {
		tls = "implicit TLS with the server's own self-signed certificate"
	}
	return runPlan{Run: run, Target: srv.Addr() + " (the embedded IMAP server)", TLS: tls, Auth: c.Producer.Auth,
		Deliver:  "LMTP to " + srv.LMTPAddr() + " (the embedded server's)",
		Accounts: c.Producer.accountWords(accounts), Producers: plural(c.Producers, "producer") + " in this process",
		Scrape: append([]string{srv.MetricsURL() + " (the server's own)"}, c.Scrape.URLs...), Ramp: ro.Plan, Template: ro.Template, ResultWait: ro.ResultWait}
}
