package pipeline

import (
	"context"
	"errors"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/ramp"
	"github.com/imapload/imapload/reporter"
	"github.com/nats-io/nats.go"
)

// pipe is one Run: its server, its roles and the operator's connection
// (the ramp's side: the registry, the step commands, the results).
type pipe struct {
	cfg      *config
	srv      *server
	roles    roles
	op       *nats.Conn
	reporter *reporter.Reporter // the run's, to settle before it stops
}

// Run runs the pipeline of o to the end of its ramp and returns the step
// results in order, as the ramp controller does; see the package doc for
// what it starts and in which order. It returns once everything it started
// has stopped, so the reporter's last files are written. A role that fails
// ends the run with its error (wrapping ErrRole), joined to the results
// so far.
func Run(ctx context.Context, o *Options) ([]messages.StepResult, error) {
	cfg, err := o.config()
	if err != nil {
		return nil, err
	}
	p := &pipe{cfg: cfg, srv: &server{cfg: cfg}}
	defer p.srv.close()
	if err := p.srv.start(); err != nil {
		return nil, err
	}
	run, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	p.roles.ctx, p.roles.cancel = context.WithCancel(context.WithoutCancel(ctx))
	p.roles.fail = fail
	defer p.roles.stop()
	return p.run(run)
}

// run starts the roles, waits for the producers and drives the ramp.
func (p *pipe) run(ctx context.Context) ([]messages.StepResult, error) {
	var err error
	if p.op, err = p.srv.connect(bus.RoleOperator, "imapload-run"); err != nil {
		return nil, err
	}
	agg, err := p.startAll(ctx)
	if err != nil {
		return nil, err
	}
	if p.cfg.OnReady != nil {
		e := p.srv.endpoint()
		e.Aggregator = agg
		p.cfg.OnReady(e)
	}
	if err := p.awaitProducers(ctx); err != nil {
		return nil, err
	}
	return p.drive(ctx)
}

// drive runs the ramp on a connection of its own; a role's failure ends
// it with the role's error.
func (p *pipe) drive(ctx context.Context) ([]messages.StepResult, error) {
	nc, err := p.srv.connect(bus.RoleOperator, "imapload-ramp")
	if err != nil {
		return nil, err
	}
	o := p.cfg.Ramp
	drive := p.cfg.Drive
	if drive == nil {
		drive = controllerRun
	}
	results, err := drive(ctx, nc, &o)
	p.settle(ctx, results)
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, ctx.Err()) {
		err = errors.Join(cause, err)
	}
	return results, err
}

// controllerRun is the default Drive: the ramp controller of o on nc.
func controllerRun(ctx context.Context, nc *nats.Conn, o *ramp.Options) ([]messages.StepResult, error) {
	c, err := ramp.New(nc, o)
	if err != nil {
		return nil, err
	}
	return c.Run(ctx)
}
