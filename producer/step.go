package producer

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// stepRun is one step as this producer runs it: a dispatcher offering load
// from the step start, the sessions serving it, a flusher cutting a batch
// every FlushInterval and a publisher shipping them. Stop it with stop; it
// also ends by itself when the step is over.
type stepRun struct {
	cmd   messages.StepCommand
	info  messages.StepInfo
	cfg   *config
	log   *slog.Logger
	js    jetstream.JetStream
	seed  uint64
	env   *sessionEnv
	rec   *recorder.Recorder
	host  *hostWatch
	abort context.CancelFunc
	pub   *publisher
	done  chan struct{} // closed once the final batch is published (or lost)
}

// shutdownGrace is how long a step's last batches may still be published
// once the producer is told to stop: with NATS unreachable, a producer's stop
// takes its sessions' drain (at most OpTimeout) and then at most this.
const shutdownGrace = 5 * time.Second

// startStep starts running cmd with the share in info, under ctx (Run's):
// when ctx ends the step stops as stop stops it, and its publisher gets
// shutdownGrace from then on to ship what is left. It returns at once; the
// step runs in a goroutine that stop (or the done channel) waits for.
func (p *Producer) startStep(ctx context.Context, cmd messages.StepCommand, info messages.StepInfo) *stepRun {
	tl := timeline{start: time.Now(), warmup: cmd.WarmupOrDefault(), duration: cmd.Duration.D()}
	seed := stepSeed(p.seed, cmd.Run, cmd.Step)
	rec := recorder.New(cmd.Run, cmd.Step, p.cfg.ID, info, &recorder.Options{
		Reservoir: p.cfg.Reservoir, Seed: seed, Secrets: p.cfg.secrets, SaturationLag: p.cfg.SaturationLag,
	})
	log := p.log.With("run", cmd.Run, "step", cmd.Step)
	env := newSessionEnv(p.cfg, tl, rec, log, p.seed)
	env.scripted = cmd.Script != ""
	env.fetchTarget = cmd.FetchTargetOrDefault()
	stepCtx, cancel := context.WithCancel(ctx)
	st := &stepRun{cmd: cmd, info: info, cfg: p.cfg, log: log, js: p.js, seed: seed, env: env, rec: rec,
		host: p.host, abort: cancel, pub: newPublisher(p.js, log, p.cfg.PublishRetry, seed), done: make(chan struct{})}
	st.pub.instance = p.instance
	go st.run(ctx, stepCtx)
	return st
}

// stop ends the step early: the dispatcher stops, commands in flight finish
// or time out, queued ones are counted as dropped, and the final batch is
// published. It waits for all of that and may be called more than once.
func (st *stepRun) stop() {
	st.abort()
	<-st.done
}

// run runs the step under stepCtx; its batches are published under a
// context of their own, which ends shutdownGrace after runCtx does.
func (st *stepRun) run(runCtx, stepCtx context.Context) {
	defer close(st.done)
	defer st.abort()
	pubCtx, stopPub := context.WithCancelCause(context.WithoutCancel(runCtx))
	defer stopPub(nil)
	grace := context.AfterFunc(runCtx, func() {
		time.AfterFunc(shutdownGrace, func() { stopPub(errShutdownGrace) })
	})
	defer grace()
	pub := st.pub
	var pubWG sync.WaitGroup
	pubWG.Go(func() { pub.run(pubCtx) })
	cut := newCutter(st.rec, st.env, st.host)
	pub.in <- st.cutBatch(cut, st.env.tl.start, false) // batch 0: "wait for my final batch"
	st.offer(stepCtx, cut, pub.in)
	pub.in <- st.cutBatch(cut, time.Now(), true)
	close(pub.in)
	pubWG.Wait()
}

// offer runs the dispatcher, the sessions and the flusher until the step is
// over and its sessions are done.
func (st *stepRun) offer(ctx context.Context, cut *cutter, out chan<- *messages.SampleBatch) {
	queue := make(chan job, st.cfg.Queue)
	sessCtx, stopSessions := context.WithCancel(ctx)
	defer stopSessions()
	var sessions, held sync.WaitGroup
	st.startSessions(sessCtx, &sessions, queue)
	holdCtx, stopHold := context.WithCancel(ctx)
	defer stopHold()
	var delivering sync.WaitGroup
	if rate := st.info.DeliverRate; rate > 0 {
		st.env.inbox = newInboxWatch(st.env, st.cfg.InboxTimeout)
		dl := newDeliverer(st.env, rate, st.cmd.ArrivalOrDefault(), st.seed)
		delivering.Go(func() { dl.run(ctx) })
	}
	if n := st.info.Connections; n > 0 {
		newHolder(st.env, n, st.seed).start(holdCtx, &held, st.cmd.StaggerOrDefault())
		defer st.env.held.unwatch()
	}
	flushStop := make(chan struct{})
	var flusher sync.WaitGroup
	flusher.Go(func() { st.flush(cut, out, flushStop) })
	st.dispatcher(queue).run(ctx)
	st.env.held.endWindow()
	st.env.endWindow()
	// Queued and in-flight commands get one operation timeout to finish;
	// after an abort, only those in flight do. The deliveries in flight
	// end within it too (deliverer.run drops the backlog), and their
	// arrivals are awaited within it, so that a producer's final batch
	// comes at most one OpTimeout after the step's end whatever it ran.
	drain := time.AfterFunc(st.cfg.OpTimeout, stopSessions)
	arrivals, stopArrivals := context.WithTimeout(ctx, st.cfg.OpTimeout)
	defer stopArrivals()
	delivering.Wait()
	if st.env.inbox != nil {
		st.env.inbox.drain(arrivals.Done()) // each at most InboxTimeout; unseen by the end of the drain: missing
	}
	stopHold() // held connections log out while the sessions drain
	sessions.Wait()
	drain.Stop()
	held.Wait()
	for j := range queue {
		st.env.drop(j) // scheduled, never sent
	}
	close(flushStop)
	flusher.Wait()
}

func (st *stepRun) startSessions(ctx context.Context, wg *sync.WaitGroup, queue <-chan job) {
	n := st.cfg.sessions
	stagger := st.cmd.StaggerOrDefault()
	for k := range n {
		s := newSession(st.env, k, st.seed)
		at := st.env.tl.start.Add(staggerOffset(st.cfg.ID, k, n, stagger))
		wg.Go(func() { s.run(ctx, queue, at) })
	}
}

func (st *stepRun) dispatcher(queue chan<- job) *dispatcher {
	m := st.cfg.mix
	if st.cmd.Mix != nil {
		if sm, err := newMix(st.cmd.Mix); err == nil { // validated with the command
			m = sm
		}
	}
	rate, script := st.info.Rate, st.cmd.ScriptOf()
	if script != nil {
		rate /= float64(len(script)) // sessions per second
	}
	return &dispatcher{
		tl:     st.env.tl,
		pacer:  newPacer(rate, st.cmd.ArrivalOrDefault(), st.seed),
		mix:    m,
		script: script,
		rng:    newRand(st.seed, 0x64697370),
		rec:    st.rec,
		queue:  queue,
		env:    st.env,
	}
}

// cutBatch cuts the batch up to now and hands it to Options.OnBatch.
func (st *stepRun) cutBatch(cut *cutter, now time.Time, final bool) *messages.SampleBatch {
	b := cut.cut(now, final)
	if st.cfg.OnBatch != nil {
		st.cfg.OnBatch(b)
	}
	return b
}

// flush cuts a batch every FlushInterval until stop is closed. It never
// blocks on the publisher: while the publisher's queue is full (NATS slow or
// down), it cuts nothing, so the next batch cut carries those counts too and
// nothing is lost.
func (st *stepRun) flush(cut *cutter, out chan<- *messages.SampleBatch, stop <-chan struct{}) {
	t := time.NewTicker(st.cfg.FlushInterval)
	defer t.Stop()
	skipped := 0
	for {
		select {
		case <-t.C:
			if len(out) == cap(out) {
				skipped++
				continue
			}
			if skipped > 0 {
				st.log.Warn("producer: publisher queue was full; later batches carry the counts of the intervals not cut",
					"intervals", skipped)
				skipped = 0
			}
			out <- st.cutBatch(cut, time.Now(), false)
		case <-stop:
			return
		}
	}
}
