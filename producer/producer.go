package producer

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/messages"
)

// stepQueue is how many step commands may wait while one is being handled.
const stepQueue = 64

// Producer offers IMAP load on command. Create it with New and start it with
// Run.
type Producer struct {
	nc       *nats.Conn
	cfg      *config
	log      *slog.Logger
	seed     uint64
	instance string // random per process: in the registry entry and every message id
	running  atomic.Bool

	// Set up by Run, then used by its control loop only.
	js       jetstream.JetStream
	reg      *registry
	host     *hostWatch // what the batches' health reports of the host
	cur      *stepRun   // the step running or last run, nil before the first
	last     stepReply  // the answer to the step last accepted
	history  history    // every step accepted, to refuse a reused one
	refusals refusalLog // which refused commands are logged
}

// New checks opts and returns a Producer that will use nc. It does no I/O.
// The producer borrows nc: closing it is the caller's job, after Run returns.
func New(nc *nats.Conn, opts *Options) (*Producer, error) {
	if nc == nil {
		return nil, fmt.Errorf("%w: nil NATS connection", ErrBadOptions)
	}
	cfg, err := opts.config()
	if err != nil {
		return nil, err
	}
	seed := cfg.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	return &Producer{nc: nc, cfg: cfg, log: cfg.Logger.With("producer", cfg.ID), seed: idSeed(cfg.ID, seed),
		instance: fmt.Sprintf("%08x", rand.Uint32())}, nil
}

// ID is the producer's id.
func (p *Producer) ID() string { return p.cfg.ID }

// Run ensures the samples stream and the registry bucket exist, registers the
// producer (re-putting its entry every Heartbeat), and runs the step commands
// it receives on messages.StepSubject until ctx is done. Then it stops taking
// commands, ends the running step early and publishes its final batch,
// unregisters and returns nil, having waited for every goroutine it started.
// It returns an error only when it cannot set up. Run may be called once.
func (p *Producer) Run(ctx context.Context) error {
	if !p.running.CompareAndSwap(false, true) {
		return ErrRunTwice
	}
	p.host = watchHost()
	defer p.host.stop()
	msgs, sub, err := p.setUp(ctx)
	if err != nil {
		return err
	}
	// Deferred, so that they run on every way out (a panic included), in
	// this order: unsubscribe, end the step, stop the heartbeat, unregister.
	defer p.unregister(ctx)
	var hb sync.WaitGroup
	hbCtx, stopHeartbeat := context.WithCancel(ctx)
	hb.Go(func() { p.heartbeat(hbCtx) })
	defer hb.Wait()
	defer stopHeartbeat()
	defer p.stopStep() // the step runs under ctx: it has shutdownGrace to publish
	defer p.unsubscribe(sub)
	p.log.Info("producer: ready", "target", p.cfg.Addr, "sessions", p.cfg.sessions)
	p.control(ctx, msgs)
	return nil
}

func (p *Producer) unsubscribe(sub *nats.Subscription) {
	if err := sub.Unsubscribe(); err != nil {
		p.log.Warn("producer: unsubscribe", "err", err)
	}
}

// unregister deletes the registry entry, even though ctx has ended: that is
// when it is needed. With NATS down it does not wait for it: the entry
// expires by its TTL (bus.Options.HeartbeatTTL) instead.
func (p *Producer) unregister(ctx context.Context) {
	if !p.nc.IsConnected() {
		p.log.Warn("producer: NATS connection down; the registry entry is left to expire")
		p.log.Info("producer: stopped")
		return
	}
	if err := p.reg.remove(context.WithoutCancel(ctx)); err != nil {
		p.log.Warn("producer: unregister", "err", err)
	}
	p.log.Info("producer: stopped")
}

// setUp ensures the stream and bucket, subscribes to step commands and
// registers. The subscription comes first so that a producer is never
// counted live before it can hear a step command.
func (p *Producer) setUp(ctx context.Context) (chan *nats.Msg, *nats.Subscription, error) {
	js, err := jetstream.New(p.nc, jetstream.WithPublishAsyncMaxPending(256), jetstream.WithPublishAsyncTimeout(ackWait))
	if err != nil {
		return nil, nil, fmt.Errorf("producer: jetstream: %w", err)
	}
	if err := ensureStreams(ctx, js, p.cfg.Bus); err != nil {
		return nil, nil, err
	}
	kv, err := bus.EnsureProducers(ctx, js, p.cfg.Bus)
	if err != nil {
		return nil, nil, err
	}
	ensure := func(ctx context.Context) error { _, err := bus.EnsureProducers(ctx, js, p.cfg.Bus); return err }
	p.js, p.reg = js, newRegistry(kv, ensure, p.cfg.ID, p.cfg.Addr, p.instance)
	if err := p.reg.claim(ctx, p.cfg.Heartbeat); err != nil {
		return nil, nil, err
	}
	msgs := make(chan *nats.Msg, stepQueue)
	sub, err := p.nc.ChanSubscribe(messages.StepSubject, msgs)
	if err == nil {
		err = p.nc.FlushTimeout(registryTimeout)
	}
	if err == nil {
		err = p.reg.put(ctx)
	}
	if err != nil {
		if sub != nil {
			_ = sub.Unsubscribe()
		}
		_ = p.reg.remove(context.WithoutCancel(ctx)) // a put that timed out may still have landed
		return nil, nil, fmt.Errorf("producer: subscribe and register: %w", err)
	}
	return msgs, sub, nil
}

// heartbeat re-puts the registry entry every Heartbeat until ctx ends; a put
// recreates the bucket if it is gone. After every reconnection it also
// ensures the samples stream and re-registers at once, and on every beat
// until that succeeds: a restarted NATS server may have lost both (the
// bucket always, being in memory).
func (p *Producer) heartbeat(ctx context.Context) {
	t := time.NewTicker(p.cfg.Heartbeat)
	defer t.Stop()
	reconnected := p.nc.StatusChanged(nats.CONNECTED)
	defer p.nc.RemoveStatusListener(reconnected)
	repair := false // a reconnection's repair has not succeeded yet
	for {
		select {
		case <-ctx.Done():
			return
		case <-reconnected:
			repair = !p.repair(ctx)
		case <-t.C:
			if repair {
				repair = !p.repair(ctx)
			} else if err := p.reg.put(ctx); err != nil && ctx.Err() == nil {
				p.log.Warn("producer: heartbeat", "err", err)
			}
		}
	}
}

// ensureStreams creates the samples stream a producer publishes to and the
// steps stream that keeps the commands it is sent (before it can hear one,
// so that the aggregator can check its batches against it).
func ensureStreams(ctx context.Context, js jetstream.JetStream, o *bus.Options) error {
	if _, err := bus.EnsureSteps(ctx, js, o); err != nil {
		return err
	}
	_, err := bus.EnsureSamples(ctx, js, o)
	return err
}

// repair recreates what a NATS restart may have lost and registers again.
// It reports whether it succeeded.
func (p *Producer) repair(ctx context.Context) bool {
	ectx, cancel := context.WithTimeout(ctx, registryTimeout)
	err := ensureStreams(ectx, p.js, p.cfg.Bus)
	cancel()
	if err == nil {
		err = p.reg.put(ctx)
	}
	if err != nil {
		if ctx.Err() == nil {
			p.log.Warn("producer: after reconnecting; retried on the next heartbeat", "err", err)
		}
		return false
	}
	p.log.Info("producer: reconnected; streams and registry entry ensured")
	return true
}
