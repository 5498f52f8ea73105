package observe_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/aggregator"
	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/internal/testkit/natstest"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/observe"
	"github.com/imapload/imapload/producer"
	"github.com/imapload/imapload/ramp"
	"github.com/imapload/imapload/reporter"
)

// pipeline is the whole fleet in this process, each role on a NATS
// connection of its own as separate processes would be: producers, the
// aggregator and an observer, around the embedded NATS server.
type pipeline struct {
	t  *testing.T
	ns *embedded.NATS
	nc *nats.Conn // the test's own, as an operator's
}

func newPipeline(t *testing.T) *pipeline {
	t.Helper()
	ns, nc := natstest.Start(t)
	return &pipeline{t: t, ns: ns, nc: nc}
}

// run starts role on a connection of its own until the test ends; its
// Run must then return nil.
func (p *pipeline) run(name string, run func(context.Context) error) {
	p.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	p.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			p.t.Errorf("%s: Run() = %v, want nil", name, err)
		}
	})
}

func (p *pipeline) connect() *nats.Conn {
	p.t.Helper()
	nc, err := p.ns.Connect()
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(nc.Close)
	return nc
}

// logger sends warnings of the roles to the test's log.
func (p *pipeline) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{p.t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// startProducer runs a producer against addr and waits for it to register.
func (p *pipeline) startProducer(o *producer.Options) {
	p.t.Helper()
	o.Logger = p.logger()
	pr, err := producer.New(p.connect(), o)
	if err != nil {
		p.t.Fatalf("producer.New() error = %v", err)
	}
	p.run("producer "+o.ID, pr.Run)
	js, err := jetstream.New(p.nc)
	if err != nil {
		p.t.Fatal(err)
	}
	testkit.WaitFor(p.t, 30*time.Second, "the producer registered", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		kv, err := js.KeyValue(ctx, messages.ProducersBucket)
		if err != nil {
			return false
		}
		keys, err := kv.Keys(ctx)
		return err == nil && len(keys) > 0
	})
}

// startAggregator runs the aggregator.
func (p *pipeline) startAggregator() {
	p.t.Helper()
	a, err := aggregator.New(p.connect(), &aggregator.Options{StepTimeout: 10 * time.Second, Logger: p.logger()})
	if err != nil {
		p.t.Fatal(err)
	}
	p.run("aggregator", a.Run)
}

// startObserver runs an observer of endpoints.
func (p *pipeline) startObserver(o *observe.Options) {
	p.t.Helper()
	o.Logger = p.logger()
	ob, err := observe.New(p.connect(), o)
	if err != nil {
		p.t.Fatalf("observe.New() error = %v", err)
	}
	p.run("observer", ob.Run)
}

// ramp runs the given rates, each step warmup + window long, and builds
// the report of its results. onStep is called as each step is offered.
func (p *pipeline) ramp(run string, rates []float64, tmpl messages.StepCommand, onStep func(messages.StepCommand)) messages.RunReport {
	p.t.Helper()
	tmpl.Run = run
	o := &ramp.Options{Template: tmpl, Plan: ramp.Plan{Rates: rates}, ResultWait: 60 * time.Second, Logger: p.logger()}
	if onStep != nil {
		o.OnStep = func(cmd messages.StepCommand, _ []messages.StepReply) { onStep(cmd) }
	}
	c, err := ramp.New(p.connect(), o)
	if err != nil {
		p.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	results, err := c.Run(ctx)
	if err != nil {
		p.t.Fatalf("ramp: Run() error = %v", err)
	}
	return reporter.Build(run, results, 0, time.Now())
}

// table is r as the terminal table shows it.
func table(t *testing.T, r messages.RunReport) string {
	t.Helper()
	var b strings.Builder
	if err := reporter.RenderTable(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
