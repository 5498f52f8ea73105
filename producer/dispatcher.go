package producer

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// dispatcher is the open-loop generator of one step: it wakes at each
// command's intended start, draws the command from the mix and hands it to
// the queue, whatever the sessions and the server are doing. A full queue
// drops the command (counted, per phase, as dropped by the generator).
type dispatcher struct {
	tl    timeline
	pacer *pacer
	mix   mix
	// script, when set, makes each scheduled job a whole session of these
	// commands (the pacer then runs at the session rate).
	script messages.Script
	rng    *rand.Rand
	rec    *recorder.Recorder
	queue  chan<- job
	env    *sessionEnv
}

// run generates commands until the step's end or ctx ends, then closes the
// queue and env.finished.
func (d *dispatcher) run(ctx context.Context) {
	defer close(d.env.finished)
	defer close(d.queue)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		off := d.pacer.next()
		if off >= d.tl.length() {
			// The step lasts its whole window even when the last start
			// falls short of its end: a final batch that ends early means
			// a step that was stopped (see aggregator's StoppedEarly).
			d.sleepUntil(ctx, timer, d.tl.start.Add(d.tl.length()))
			return
		}
		intended := d.tl.start.Add(off)
		if !d.sleepUntil(ctx, timer, intended) {
			return
		}
		d.handoff(d.job(intended))
	}
}

// job is the next job, intended at t: a command drawn from the mix, or a
// session of the script.
func (d *dispatcher) job(t time.Time) job {
	if d.script != nil {
		return job{phase: d.script[0], intended: t, script: d.script}
	}
	return job{phase: d.mix.draw(d.rng.Float64()), intended: t}
}

// sleepUntil waits on timer until t; it returns false, at once, when ctx ends.
func (d *dispatcher) sleepUntil(ctx context.Context, timer *time.Timer, t time.Time) bool {
	if wait := time.Until(t); wait > 0 {
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			return false
		}
	}
	return ctx.Err() == nil
}

// handoff queues j, or drops it if the queue is full. Schedule lag (how late
// j is handed on) is recorded for commands in the window: a large lag means
// the generator itself cannot keep up, which the batch's health reports.
func (d *dispatcher) handoff(j job) {
	if d.tl.inWindow(j.intended) {
		d.rec.Lag(time.Since(j.intended))
	}
	select {
	case d.queue <- j:
	default:
		d.env.drop(j)
	}
}
