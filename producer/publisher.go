package producer

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/messages"
)

// Publishing limits.
const (
	ackWait        = 5 * time.Second // one attempt's wait for the stream's ack
	publishBackoff = 100 * time.Millisecond
	publishCap     = 2 * time.Second
	publishQueue   = 64 // batches cut but not yet published
)

// publisher publishes one step's batches in order, each asynchronously to
// JetStream with its message id (so a retry is stored once), retrying stalls
// and outages for up to retryFor. A batch finally lost is logged and counted
// in the next batch's Health.Lost, never dropped silently.
type publisher struct {
	js       jetstream.JetStream
	log      *slog.Logger
	retryFor time.Duration
	in       chan *messages.SampleBatch
	rng      *rand.Rand
	lost     uint64 // lost since the last batch that got through
}

func newPublisher(js jetstream.JetStream, log *slog.Logger, retryFor time.Duration, seed uint64) *publisher {
	return &publisher{
		js: js, log: log, retryFor: retryFor,
		in:  make(chan *messages.SampleBatch, publishQueue),
		rng: rand.New(rand.NewPCG(seed, 0x707562)),
	}
}

// run publishes batches until in is closed.
func (p *publisher) run() {
	for b := range p.in {
		p.ship(b)
	}
}

// ship publishes b carrying the count of batches lost before it. If b is
// lost too, it is logged and counted into the next batch.
func (p *publisher) ship(b *messages.SampleBatch) {
	b.Health.Lost += p.lost
	if err := p.publish(b); err != nil {
		p.lost = b.Health.Lost + 1
		p.log.Error("producer: sample batch lost; counted in the next batch", "run", b.Run,
			"step", b.Step, "seq", b.Seq, "final", b.Final, "lost", p.lost, "err", err)
		return
	}
	p.lost = 0
}

// publish encodes b and publishes it, retrying until it is stored or
// retryFor has passed.
func (p *publisher) publish(b *messages.SampleBatch) error {
	data, err := messages.EncodeBatch(b)
	if err != nil { // a bug of ours: the recorder made a batch the contract refuses
		p.log.Error("producer: BUG: cannot encode sample batch", "run", b.Run, "step", b.Step, "seq", b.Seq, "err", err)
		return err
	}
	msg := nats.NewMsg(messages.SamplesSubject(b.Run, b.Step, b.Producer))
	msg.Header.Set(bus.ContentType, bus.MsgpackType)
	msg.Data = data
	id := messages.BatchMsgID(b.Run, b.Step, b.Producer, b.Seq)
	deadline := time.Now().Add(p.retryFor)
	for attempt := 0; ; attempt++ {
		err = p.try(msg, id)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		p.log.Warn("producer: publish failed; retrying", "msg_id", id, "attempt", attempt+1, "err", err)
		time.Sleep(backoff(attempt, publishBackoff, publishCap, p.rng.Float64()))
	}
}

// try is one asynchronous publish and the wait for its ack.
func (p *publisher) try(msg *nats.Msg, id string) error {
	f, err := p.js.PublishMsgAsync(msg, jetstream.WithMsgID(id))
	if errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
		p.waitPending() // let the earlier publishes settle, then retry
		return err
	}
	if err != nil {
		return err
	}
	timer := time.NewTimer(ackWait + time.Second) // the ack timeout fires first; this is a backstop
	defer timer.Stop()
	select {
	case <-f.Ok():
		return nil
	case err := <-f.Err():
		return err
	case <-timer.C:
		return fmt.Errorf("no ack within %v", ackWait+time.Second)
	}
}

func (p *publisher) waitPending() {
	timer := time.NewTimer(ackWait)
	defer timer.Stop()
	select {
	case <-p.js.PublishAsyncComplete():
	case <-timer.C:
	}
}
