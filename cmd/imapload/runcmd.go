package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"time"

	"github.com/imapload/imapload/pipeline"
	"github.com/imapload/imapload/producer"
	"github.com/imapload/imapload/ramp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func runCmd(g *globalFlags) *cobra.Command {
	c := newRunConfig()
	return bind(&cobra.Command{
		Use:   "run",
		Short: "Find the knee of your IMAP server in one command: NATS, producers, aggregator, reporter and ramp in this process",
		Long: `Finds where the IMAP server at --imap stops keeping up, from one process: an embedded
NATS with JetStream (a temporary store; --store keeps it), --producers local producers
(one per core by default), the aggregator, the reporter and the ramp. Before the first
step it prints its plan: the target, the accounts, the rates in order, the most it will
offer, the step length and the longest the run can take; impossible plans are refused
(exit 2) before anything is connected. Then the live progress, the table, the verdict,
the findings and the report files under --out (report.html included).

The flags mean what they mean for 'imapload producer' (--imap, --tls, --starttls,
--tls-ca, --auth, the accounts, the sessions) and 'imapload ramp' (--start, --rates,
--max, --step-duration, --profile, --script, --connections, --out, the thresholds).

To grow into a fleet: --listen ADDR exposes the embedded NATS to producers on other
hosts, with an NKey user per role (written 0600 under the store's credentials/) and
no other client admitted; run prints the 'imapload producer' command for another
host (a seed file, never a secret, on its command line), and --expect-producers N
waits for them. --nats URL uses an existing NATS and fleet instead: it starts no
aggregator when one already consumes, and with --producers 0 no local producer.
Remote producers are offered load and counted like local ones.

Exit codes: those of 'imapload ramp' (0 a verdict and every threshold passed, 1 the
run could not be carried out, 2 impossible flags, 3 the server is not answering
correctly, 4 inconclusive, 5 a threshold failed, 6 no rate held down to --min).`,
		Example: `  imapload run --imap mail.example.net:993 --tls --accounts-file accounts.txt
  imapload run --imap 127.0.0.1:143 --accounts-count 100 --accounts-password-file pw.txt \
    --rates 100,200,400,800 --step-duration 20s --out report/
  imapload run --imap 127.0.0.1:143 --lmtp 127.0.0.1:24 --profile desktop --connections 100 --accounts-count 100
  imapload run --imap mail:143 --starttls --listen 0.0.0.0:4222 --expect-producers 2 --accounts-file a.txt
  imapload run --nats nats://10.0.0.5:4222 --producers 0 --imap mail:993 --tls --accounts-file a.txt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runRun(cmd, c, g) },
	}, c)
}

// runConfig is the configuration of `imapload run`.
type runConfig struct {
	imapConnFlags
	Producer producerFlags
	Deliver  deliverFlags
	Ramp     rampFlags
	NATS     natsConfig
	Fleet    fleetFlags
	Term     termFlags
	Scrape   scrapeFlags
}

// fleetFlags say where the run's roles meet and who offers the load.
type fleetFlags struct {
	Run             string        // --run id, "auto" for a fresh one
	Producers       int           // --producers in this process
	Store           string        // --store: keep the embedded NATS's store here
	Listen          string        // --listen: expose the embedded NATS to other hosts
	ExpectProducers int           // --expect-producers from elsewhere
	ProducersWait   time.Duration // --producers-wait: how long to wait for them
	ResultWait      time.Duration // --result-wait past a step's end
}

func newRunConfig() *runConfig {
	c := &runConfig{Ramp: defaultRamp()}
	c.Ramp.Out = "imapload-report"
	return c
}

func (c *runConfig) add(fs *pflag.FlagSet) {
	c.imapConnFlags.add(fs)
	c.Producer.add(fs)
	c.Deliver.add(fs)
	c.Ramp.add(fs)
	c.NATS.add(fs)
	c.NATS.URL = ""
	nf := fs.Lookup("nats")
	nf.DefValue, nf.Usage = "", "use this NATS (and its fleet) instead of an embedded one: URL(s), comma separated"
	c.Term.add(fs)
	c.Scrape.add(fs)
	f := &c.Fleet
	fs.StringVar(&f.Run, "run", "auto", "run id (auto: run-<time>-<random>, a fresh one)")
	fs.IntVar(&f.Producers, "producers", runtime.NumCPU(), "producers to run in this process, one per core by default; 0 with --listen or --nats: only the others")
	fs.StringVar(&f.Store, "store", "", "keep the embedded NATS's JetStream store (and --listen's credentials) in this directory (default: a temporary one, removed)")
	fs.StringVar(&f.Listen, "listen", "", "expose the embedded NATS on host:port to producers on other hosts, with an NKey user per role (port 0: a free one)")
	fs.IntVar(&f.ExpectProducers, "expect-producers", 0, "producers from other hosts to wait for before the first step, besides the local ones")
	fs.DurationVar(&f.ProducersWait, "producers-wait", pipeline.DefaultProducerWait, "how long to wait for the producers to register")
	fs.DurationVar(&f.ResultWait, "result-wait", time.Minute, "how long past a step's end to wait for its result")
}

func (c *runConfig) validate() error {
	return errors.Join(
		flagErrors(c.Producer.checks(), c.Deliver.checks(), c.Ramp.checks(), c.NATS.checks(), c.Fleet.checks(), c.Scrape.checks(), []error{
			checkTLSMode(c.TLS, c.StartTLS), c.Term.check(), c.natsAlone(), c.fleetShape()}),
		checkIMAP(c.IMAP), checkOut(c.Ramp.Out))
}

func (f *fleetFlags) checks() []error {
	return []error{
		checkInt("producers", f.Producers, atLeast(0)), checkInt("expect-producers", f.ExpectProducers, atLeast(0)),
		checkDuration("producers-wait", f.ProducersWait), checkDuration("result-wait", f.ResultWait),
	}
}

// fleetShape refuses a fleet that cannot run: nobody to offer the load,
// others expected where they cannot join, the embedded server's flags with
// another server.
func (c *runConfig) fleetShape() error {
	f, other := &c.Fleet, c.NATS.URL != ""
	switch {
	case other && f.Listen != "":
		return errors.New("--listen and --nats: --listen exposes the embedded NATS, --nats uses another; choose one")
	case other && f.Store != "":
		return errors.New("--store and --nats: --store keeps the embedded NATS's store; choose one")
	case f.ExpectProducers > 0 && !other && f.Listen == "":
		return fmt.Errorf("--expect-producers %d: producers elsewhere cannot join without --listen (this run's NATS) or --nats (a shared one)", f.ExpectProducers)
	case f.Producers == 0 && !other && f.Listen == "":
		return errors.New("--producers 0: nobody would offer load; run producers here (--producers N), or let others join with --listen or --nats")
	}
	return nil
}

// natsAlone refuses the NATS client flags without --nats: the embedded
// server makes its own credentials.
func (c *runConfig) natsAlone() error {
	if c.NATS.URL == "" && len(c.NATS.credentialWays()) > 0 {
		return fmt.Errorf("%v: only with --nats (the embedded NATS makes its own credentials)", c.NATS.credentialWays())
	}
	return nil
}

// runID is --run, or a fresh id for "auto".
func runID(given, prefix string) string {
	if given != "auto" {
		return given
	}
	b := make([]byte, 2)
	_, _ = rand.Read(b)
	return prefix + "-" + time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

// rampOptions are the ramp's options of a run: its plan and step template
// from the flags (an impossible one is a usage error), and the result wait.
func rampOptions(r *rampFlags, run string, resultWait time.Duration) (ramp.Options, error) {
	plan, tmpl, err := r.plan(run)
	return ramp.Options{Template: tmpl, Plan: plan, ResultWait: resultWait, Cooldown: r.Cooldown}, err
}

func runRun(cmd *cobra.Command, c *runConfig, g *globalFlags) error {
	run := runID(c.Fleet.Run, "run")
	ro, err := rampOptions(&c.Ramp, run, c.Fleet.ResultWait)
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
	o, err := c.pipelineOptions(run, log)
	if err != nil {
		return err
	}
	if err := stepDeliveries(&ro.Template, c.Ramp.Shape.DeliverRate, c.Deliver.target(), c.Fleet.Producers, len(o.Producer.Accounts)); err != nil {
		return err
	}
	o.Ramp = ro
	c.plan(run, ro, len(o.Producer.Accounts)).write(out)
	if err := c.preflight(cmd.Context(), out, &o.Producer, c.Fleet.Producers); err != nil {
		return err
	}
	o.OnReady = func(e pipeline.Endpoint) { c.printEndpoint(cmd, e) }
	report, err := runPipeline(cmd.Context(), out, o, crit, &c.Ramp, tty)
	if report == nil {
		return err
	}
	return errors.Join(verdictError(*report), err)
}

// preflight logs in once as the first account the way the local producers
// will (checkServer), so that a mistake in the target, TLS or password
// flags ends the run with its fix before any load. Without local producers
// it checks nothing: the server may be reachable only from the fleet.
func (c *runConfig) preflight(ctx context.Context, out io.Writer, po *producer.Options, local int) error {
	if local == 0 || len(po.Accounts) == 0 {
		return nil
	}
	a := po.Accounts[0]
	if err := c.checkServer(ctx, po.TLSConfig, po.Auth, a); err != nil {
		return err
	}
	fmt.Fprintf(out, "checked    %s answered and %s logged in\n", c.IMAP, a.User)
	return nil
}

// pipelineOptions are the pipeline of the flags: the producers' template
// (it reads the accounts file), the NATS to use and who offers the load.
func (c *runConfig) pipelineOptions(run string, log *slog.Logger) (*pipeline.Options, error) {
	tlsCfg, err := c.tlsConfig(log, "run")
	if err != nil {
		return nil, err
	}
	po, err := c.Producer.options(c.NATS.bus())
	if err != nil {
		return nil, usage(err)
	}
	po.Addr, po.LocalAddr, po.TLS, po.StartTLS, po.TLSConfig = c.IMAP, c.LocalAddr, c.TLS, c.StartTLS, tlsCfg
	if err := c.Deliver.apply(po, log); err != nil {
		return nil, err
	}
	o := &pipeline.Options{Run: run, Producers: c.Fleet.Producers, Producer: *po, ExpectProducers: c.Fleet.ExpectProducers,
		ProducerWait: c.Fleet.ProducersWait, StoreDir: c.Fleet.Store, Listen: c.Fleet.Listen,
		Threshold: c.Ramp.Threshold, OutDir: c.Ramp.Out, Bus: c.NATS.bus(), Logger: log, Observe: c.Scrape.observer()}
	if c.NATS.URL != "" {
		o.NATS, o.NATSCreds = c.NATS.URL, c.NATS.Creds
		if o.NATSOptions, err = c.NATS.options(); err != nil {
			return nil, err
		}
	}
	return o, nil
}
