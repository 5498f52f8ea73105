package pipeline

import (
	"context"
	"fmt"
	"sync"

	"github.com/imapload/imapload/aggregator"
	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/observe"
	"github.com/imapload/imapload/producer"
	"github.com/imapload/imapload/reporter"
)

// roles runs the pipeline's roles, each on a goroutine and a NATS
// connection of its own. The first that fails cancels the run with its
// error (fail); stop cancels the rest and waits for them.
type roles struct {
	wg     sync.WaitGroup
	ctx    context.Context // the roles'; cancelled by stop
	cancel context.CancelFunc
	fail   context.CancelCauseFunc // ends the run with a role's error
}

// start runs fn until the roles' context ends; an error before then fails
// the run.
func (r *roles) start(name string, fn func(context.Context) error) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		if err := fn(r.ctx); err != nil && r.ctx.Err() == nil {
			r.fail(fmt.Errorf("%w: %s: %w", ErrRole, name, err))
		}
	}()
}

// stop cancels every role and waits until all have returned.
func (r *roles) stop() {
	r.cancel()
	r.wg.Wait()
}

// startAll starts the aggregator (unless one consumes already), the
// reporter and the local producers; it returns whether it started an
// aggregator.
func (p *pipe) startAll(ctx context.Context) (bool, error) {
	agg, err := p.needAggregator(ctx)
	if err != nil {
		return false, err
	}
	if agg {
		err = p.startAggregator()
	}
	if err == nil {
		err = p.startReporter()
	}
	if err == nil && p.cfg.Observe != nil {
		err = p.startObserver()
	}
	for i := 0; err == nil && i < len(p.cfg.local); i++ {
		err = p.startProducer(i)
	}
	return agg, err
}

// needAggregator reports whether this run must pool its own batches: always
// on its embedded server, on another NATS unless an aggregator consumes.
func (p *pipe) needAggregator(ctx context.Context) (bool, error) {
	if p.srv.ns != nil {
		return true, nil
	}
	consuming, err := AggregatorConsuming(ctx, p.op)
	return !consuming, err
}

func (p *pipe) startAggregator() error {
	nc, err := p.srv.connect(bus.RoleAggregator, "imapload-aggregator")
	if err != nil {
		return err
	}
	a, err := aggregator.New(nc, &aggregator.Options{Logger: p.cfg.Logger, StepTimeout: p.cfg.StepTimeout, Bus: p.cfg.Bus})
	if err != nil {
		return err
	}
	p.roles.start("aggregator", a.Run)
	return nil
}

func (p *pipe) startReporter() error {
	nc, err := p.srv.connect(bus.RoleReporter, "imapload-reporter")
	if err != nil {
		return err
	}
	r, err := reporter.New(nc, p.cfg.Run, &reporter.Options{Threshold: p.cfg.Threshold, OutDir: p.cfg.OutDir, Logger: p.cfg.Logger, Bus: p.cfg.Bus})
	if err != nil {
		return err
	}
	p.reporter = r
	p.roles.start("reporter", r.Run)
	return nil
}

// startObserver starts the observer of cfg.Observe; it listens for the
// step commands before the first is sent.
func (p *pipe) startObserver() error {
	nc, err := p.srv.connect(bus.RoleObserverPrefix+p.cfg.Observe.ID, "imapload-observer")
	if err != nil {
		return err
	}
	ob, err := observe.New(nc, p.cfg.Observe)
	if err != nil {
		return err
	}
	p.roles.start("observer", ob.Run)
	return nil
}

// startProducer starts local producer i (from 0) from the template.
func (p *pipe) startProducer(i int) error {
	id := p.cfg.local[i]
	o := p.cfg.Producer
	o.ID, o.Seed, o.Bus, o.Logger = id, uint64(i+1), p.cfg.Bus, p.cfg.Logger
	nc, err := p.srv.connect(id, "imapload-producer-"+id)
	if err != nil {
		return err
	}
	pr, err := producer.New(nc, &o)
	if err != nil {
		return err
	}
	p.roles.start(id, pr.Run)
	return nil
}
