package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/imapload/imapload/aggregator"
	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/producer"
	"github.com/imapload/imapload/ramp"
	"github.com/imapload/imapload/reporter"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
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
report files to --out.`,
		Example: `  go run ./cmd/imapload demo
  go run ./cmd/imapload demo --step-duration 5s --rates 200,400,800 --out /tmp/report`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDemo(cmd, c, g.logger(cmd)) },
	}, c)
}

// demoConfig is the configuration of `imapload demo`.
type demoConfig struct {
	Producers int // --producers to run in this process
	Ramp      rampFlags
	Producer  producerFlags
	Server    imapServerFlags
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
	fs.BoolVar(&c.Server.TLS, "tls", false, "serve implicit TLS with a self-signed certificate, which the demo's producers dial and trust")
	fs.IntVar(&c.Producers, "producers", 3, "producers to run in this process")
}

func (c *demoConfig) validate() error {
	return errors.Join(
		flagErrors(c.Ramp.checks(), c.Producer.checks(), c.Server.checks(),
			[]error{checkInt("producers", c.Producers, atLeast(1))}),
		checkOut(c.Ramp.Out))
}

// demo holds the in-process pipeline.
type demo struct {
	out   io.Writer
	log   *slog.Logger
	store string // NATS store directory, removed at the end
	ns    *embedded.NATS
	imap  *embedded.IMAP
	conns []*nats.Conn
	wg    sync.WaitGroup
	errs  chan error
}

func runDemo(cmd *cobra.Command, c *demoConfig, log *slog.Logger) error {
	ctx := cmd.Context()
	d := &demo{out: cmd.OutOrStdout(), log: log, errs: make(chan error, 16)}
	defer d.close()
	if err := d.startServers(c); err != nil {
		return err
	}
	run := "demo-" + time.Now().UTC().Format("20060102-150405")
	roles, cancelRoles := context.WithCancel(ctx)
	defer func() { cancelRoles(); d.wg.Wait() }()
	if _, err := d.startRoles(roles, c, run); err != nil {
		return err
	}
	if err := d.awaitProducers(ctx, c.Producers); err != nil {
		return err
	}
	crit, err := c.Ramp.criteria()
	if err != nil {
		return err
	}
	results, err := d.ramp(ctx, &c.Ramp, run)
	if len(results) == 0 {
		return errors.Join(err, d.roleErr())
	}
	report := runReport(run, results, c.Ramp.Threshold, crit, err)
	ferr := finish(d.out, c.Ramp.Out, report)
	printDemoFindings(d.out, report, d.setup(&c.Server))
	return errors.Join(verdictError(report), ferr, d.roleErr())
}

func (d *demo) startServers(c *demoConfig) error {
	dir, err := os.MkdirTemp("", "imapload-demo-nats-")
	if err != nil {
		return err
	}
	d.store = dir
	d.ns, err = embedded.StartNATS(&embedded.NATSOptions{StoreDir: dir})
	if err != nil {
		return err
	}
	d.imap, err = embedded.StartIMAP(c.Server.options("127.0.0.1:0"))
	if err != nil {
		return err
	}
	fmt.Fprintf(d.out, "embedded NATS on %s (tail results: nats sub -s %s 'imapload.results.>')\n", d.ns.ClientURL(), d.ns.ClientURL())
	fmt.Fprintf(d.out, "embedded IMAP server on %s, capacity %.0f commands/s\n", d.imap.Addr(), d.imap.Capacity())
	return nil
}

// connect opens one NATS connection per role, as separate processes would.
func (d *demo) connect(name string) (*nats.Conn, error) {
	nc, err := d.ns.Connect(nats.Name(name))
	if err == nil {
		d.conns = append(d.conns, nc)
	}
	return nc, err
}

// start runs a role until ctx ends, reporting an early failure.
func (d *demo) start(ctx context.Context, name string, run func(context.Context) error) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		if err := run(ctx); err != nil && ctx.Err() == nil {
			d.errs <- fmt.Errorf("%s: %w", name, err)
		}
	}()
}

func (d *demo) startRoles(ctx context.Context, c *demoConfig, run string) (*reporter.Reporter, error) {
	for i := 1; i <= c.Producers; i++ {
		if err := d.startProducer(ctx, &c.Producer, fmt.Sprintf("demo-p%d", i), uint64(i)); err != nil {
			return nil, err
		}
	}
	nc, err := d.connect("imapload-aggregator")
	if err != nil {
		return nil, err
	}
	agg, err := aggregator.New(nc, &aggregator.Options{Logger: d.log, StepTimeout: 10 * time.Second})
	if err != nil {
		return nil, err
	}
	d.start(ctx, "aggregator", agg.Run)
	if nc, err = d.connect("imapload-reporter"); err != nil {
		return nil, err
	}
	rep, err := reporter.New(nc, run, &reporter.Options{Threshold: c.Ramp.Threshold, OutDir: c.Ramp.Out, Logger: d.log})
	if err != nil {
		return nil, err
	}
	d.start(ctx, "reporter", rep.Run)
	return rep, nil
}

func (d *demo) startProducer(ctx context.Context, p *producerFlags, id string, seed uint64) error {
	o, err := p.options(nil)
	if err != nil {
		return err
	}
	o.ID, o.Addr, o.Logger, o.Seed = id, d.imap.Addr(), d.log, seed
	if cfg := d.imap.TLSConfig(); cfg != nil { // --tls: dial TLS, trusting the server's own certificate
		o.TLS, o.TLSConfig = true, cfg
	}
	nc, err := d.connect("imapload-" + id)
	if err != nil {
		return err
	}
	pr, err := producer.New(nc, o)
	if err != nil {
		return err
	}
	d.start(ctx, id, pr.Run)
	return nil
}

// awaitProducers polls the registry until n producers are live.
func (d *demo) awaitProducers(ctx context.Context, n int) error {
	js, err := jetstream.New(d.conns[0])
	if err != nil {
		return err
	}
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if kv, err := js.KeyValue(ctx, messages.ProducersBucket); err == nil {
			if keys, err := kv.Keys(ctx); err == nil && len(keys) >= n {
				return nil
			}
		}
		select {
		case err := <-d.errs:
			return err
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("demo: %d producers did not register within 15s", n)
}

func (d *demo) ramp(ctx context.Context, r *rampFlags, run string) ([]messages.StepResult, error) {
	plan, tmpl, err := r.plan(run)
	if err != nil {
		return nil, err
	}
	nc, err := d.connect("imapload-ramp")
	if err != nil {
		return nil, err
	}
	return driveRamp(ctx, nc, &ramp.Options{Template: tmpl, Plan: plan, ResultWait: 30 * time.Second, Logger: d.log}, d.out)
}

func (d *demo) setup(s *imapServerFlags) demoSetup {
	return demoSetup{capacity: d.imap.Capacity(), bcryptCost: s.BcryptCost, slowFraction: s.SlowFraction, slowDelay: s.SlowDelay}
}

func (d *demo) roleErr() error {
	select {
	case err := <-d.errs:
		return err
	default:
		return nil
	}
}

func (d *demo) close() {
	for _, nc := range d.conns {
		nc.Close()
	}
	if d.imap != nil {
		d.imap.Close()
	}
	if d.ns != nil {
		d.ns.Shutdown()
	}
	if d.store != "" {
		os.RemoveAll(d.store)
	}
}
