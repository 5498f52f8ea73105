package fleetbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// What a simulated producer does as imapload producer does by default.
const (
	flushInterval   = time.Second     // a batch a second (producer.Options.FlushInterval)
	heartbeatEvery  = 2 * time.Second // its registry entry is re-put this often
	ackWait         = 5 * time.Second // one publish attempt's wait for its ack
	publishAttempts = 3               // attempts, with the same message id, before a batch counts lost
)

// simProducer is one simulated producer on its own NATS connection: its
// entry in the producers bucket with a heartbeat, a subscription on the step
// subject that answers a StepReply as producer/control.go does, and a step
// that cuts a batch with the real recorder every flush interval and
// publishes it with its message id, as producer/publisher.go does. Only the
// IMAP sessions are simulated (workload).
type simProducer struct {
	id    string
	seed  uint64
	nc    *nats.Conn
	js    jetstream.JetStream
	kv    jetstream.KeyValue
	sub   *nats.Subscription
	info  messages.ProducerInfo
	ctx   context.Context // the fleet's: steps and heartbeats end with it
	beats sync.WaitGroup  // its heartbeat
	steps sync.WaitGroup  // the step it runs

	mu    sync.Mutex
	tally tally
}

// tally is what one producer sent in the step last run.
type tally struct {
	batches   uint64    // acknowledged by the stream
	lost      uint64    // not acknowledged after every attempt, or not encodable
	bytes     uint64    // encoded size of the batches acknowledged
	inWindow  uint64    // those of them cut inside the measurement window
	winBytes  uint64    // their encoded size
	scheduled uint64    // Σ Scheduled of its batches
	finalAck  time.Time // when its final batch's ack came
}

// startProducer connects producer id to url and registers it; it answers
// step commands until ctx ends. It does I/O.
func startProducer(ctx context.Context, url, id string) (*simProducer, error) {
	h := fnv.New64a()
	h.Write([]byte(id))
	p := &simProducer{id: id, seed: h.Sum64(), ctx: ctx}
	var err error
	if p.nc, err = nats.Connect(url, nats.Name("fleetbench-"+id)); err != nil {
		return nil, fmt.Errorf("producer %s: %w", id, err)
	}
	if p.js, err = jetstream.New(p.nc); err == nil {
		p.kv, err = p.js.KeyValue(ctx, messages.ProducersBucket)
	}
	if err == nil {
		p.sub, err = p.nc.Subscribe(messages.StepSubject, p.onStep)
	}
	host, _ := os.Hostname()
	now := time.Now().UTC()
	p.info = messages.ProducerInfo{ID: id, Host: host, PID: os.Getpid(), Started: now, Target: "127.0.0.1:143"}
	if err == nil {
		err = p.register()
	}
	if err != nil {
		p.nc.Close()
		return nil, fmt.Errorf("producer %s: %w", id, err)
	}
	p.beats.Go(p.heartbeat)
	return p, nil
}

// close stops answering, waits for the producer's step and heartbeat (they
// end with its context) and closes its connection.
func (p *simProducer) close() {
	_ = p.sub.Unsubscribe()
	p.steps.Wait()
	p.beats.Wait()
	p.nc.Close()
}

// register puts the producer's entry (a registration or a heartbeat).
func (p *simProducer) register() error {
	p.mu.Lock()
	p.info.Heartbeat = time.Now().UTC()
	b, err := json.Marshal(p.info)
	p.mu.Unlock()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(p.ctx, ackWait)
	defer cancel()
	_, err = p.kv.Put(ctx, messages.ProducerKey(p.id), b)
	return err
}

func (p *simProducer) heartbeat() {
	t := time.NewTicker(heartbeatEvery)
	defer t.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-t.C:
			_ = p.register() // a missed heartbeat is retried at the next
		}
	}
}

// onStep accepts a step command and starts it; a command it cannot parse is
// answered with its problems. The rate is divided by the command's
// Producers, which the ramp sets. The step starts before the answer goes
// out, so that whoever got the answer may wait for the step (steps).
func (p *simProducer) onStep(m *nats.Msg) {
	if p.ctx.Err() != nil {
		return // closing
	}
	cmd, err := messages.ParseStepCommand(m.Data)
	if err != nil {
		p.respond(m, messages.StepReply{Producer: p.id, Problems: messages.StepProblems(err)})
		return
	}
	info := messages.StepInfo{FleetRate: cmd.Rate, Rate: cmd.ShareFor(cmd.Producers), Producers: cmd.Producers,
		Warmup: int64(cmd.WarmupOrDefault()), Duration: int64(cmd.Duration.D())}
	start := time.Now()
	p.mu.Lock()
	p.tally = tally{}
	p.info.Run, p.info.Step = cmd.Run, cmd.Step
	p.mu.Unlock()
	p.steps.Go(func() { p.run(cmd, info, start) })
	p.respond(m, messages.StepReply{Producer: p.id, Run: cmd.Run, Step: cmd.Step, Accepted: true,
		Rate: info.Rate, Producers: info.Producers})
}

func (p *simProducer) respond(m *nats.Msg, r messages.StepReply) {
	if b, err := json.Marshal(r); err == nil && m.Reply != "" {
		_ = m.Respond(b)
	}
}

// run offers the step from start: batch 0 at once, then a batch every flush
// interval, the last one final at the end of the window.
func (p *simProducer) run(cmd messages.StepCommand, info messages.StepInfo, start time.Time) {
	rec := recorder.New(cmd.Run, cmd.Step, p.id, info, &recorder.Options{Seed: p.seed})
	work := newWorkload(info.Rate, p.seed)
	warmup, window := time.Duration(info.Warmup), time.Duration(info.Duration)
	t := time.NewTicker(flushInterval)
	defer t.Stop()
	from := -warmup
	p.ship(rec.Cut(from, from, false, health()))
	for from < window {
		select {
		case <-p.ctx.Done():
			return
		case <-t.C:
		}
		to := min(time.Since(start)-warmup, window)
		work.record(rec, from, to)
		p.ship(rec.Cut(from, to, to == window, health()))
		from = to
	}
}

// health is what a healthy producer reports of itself.
func health() messages.Health {
	return messages.Health{CPU: 0.05, CPULimit: 1, Sessions: 16}
}

// ship encodes b and publishes it with its message id until the stream
// acknowledges it, at most publishAttempts times.
func (p *simProducer) ship(b *messages.SampleBatch) {
	data, err := messages.EncodeBatch(b)
	if err != nil {
		p.count(b, 0, time.Time{}, err)
		return
	}
	msg := nats.NewMsg(messages.SamplesSubject(b.Run, b.Step, b.Producer))
	msg.Header.Set(bus.ContentType, bus.MsgpackType)
	msg.Data = data
	id := messages.BatchMsgID(b.Run, b.Step, b.Producer, b.Seq)
	for range publishAttempts {
		if err = p.publish(msg, id); err == nil || p.ctx.Err() != nil {
			break
		}
	}
	p.count(b, len(data), time.Now(), err)
}

// publish is one asynchronous publish and the wait for its ack.
func (p *simProducer) publish(msg *nats.Msg, id string) error {
	f, err := p.js.PublishMsgAsync(msg, jetstream.WithMsgID(id))
	if err != nil {
		return err
	}
	timer := time.NewTimer(ackWait)
	defer timer.Stop()
	select {
	case <-f.Ok():
		return nil
	case err := <-f.Err():
		return err
	case <-timer.C:
		return errors.New("no ack within " + ackWait.String())
	case <-p.ctx.Done():
		return p.ctx.Err()
	}
}

// count notes batch b as acknowledged at acked (err nil) or lost.
func (p *simProducer) count(b *messages.SampleBatch, size int, acked time.Time, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.tally.lost++
		return
	}
	p.tally.batches++
	p.tally.bytes += uint64(size)
	if b.From >= 0 && b.To > b.From {
		p.tally.inWindow++
		p.tally.winBytes += uint64(size)
	}
	p.tally.scheduled += b.Scheduled
	if b.Final {
		p.tally.finalAck = acked
	}
}

// sent returns the tally of the step last run.
func (p *simProducer) sent() tally {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tally
}
