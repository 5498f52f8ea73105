package producer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/imapload/imapload/messages"
)

// errNoCount refuses a step whose rate is to be divided by the live
// producers when they cannot be counted.
var errNoCount = errors.New("producer: cannot count the live producers")

// stepReply is the answer to the step last accepted, for repeats of it.
type stepReply struct {
	run   string
	step  int
	reply messages.StepReply
}

// control handles step commands, one at a time, until ctx ends.
func (p *Producer) control(ctx context.Context, msgs <-chan *nats.Msg) {
	for {
		var stepDone <-chan struct{}
		if p.cur != nil {
			stepDone = p.cur.done
		}
		select {
		case <-ctx.Done():
			return
		case m := <-msgs:
			p.onStep(ctx, m)
		case <-stepDone:
			p.cur = nil
			p.reg.setStep("", 0)
			p.log.Info("producer: step done", "run", p.last.run, "step", p.last.step)
		}
	}
}

// onStep answers one step command and starts it if it is valid and new. A
// repeat of the step running, with the same shape (a retried request), is
// acknowledged again and not restarted; any other command for a step this
// producer accepted before, or that has a result, is refused before
// anything is sent (reuse.go); a new step preempts the running one.
func (p *Producer) onStep(ctx context.Context, m *nats.Msg) {
	cmd, err := messages.ParseStepCommand(m.Data)
	if err != nil {
		p.refuse(m, cmd, err)
		return
	}
	if p.runningNow() && p.last.run == cmd.Run && p.last.step == cmd.Step && sameStep(p.cur.cmd, cmd) {
		p.respond(m, p.last.reply)
		return
	}
	if err := p.reused(ctx, cmd); err != nil {
		p.refuse(m, cmd, err)
		return
	}
	if cmd.DeliverRate > 0 && p.cfg.LMTPAddr == "" && p.cfg.SMTPAddr == "" {
		p.refuse(m, cmd, fmt.Errorf("%w: deliver_rate: %v deliveries/s, but this producer has no delivery target: start it with --lmtp HOST:PORT or --smtp HOST:PORT",
			messages.ErrInvalidStep, cmd.DeliverRate))
		return
	}
	info, err := p.share(ctx, cmd)
	if err != nil {
		p.refuse(m, cmd, err)
		return
	}
	r := messages.StepReply{Producer: p.cfg.ID, Run: cmd.Run, Step: cmd.Step, Accepted: true,
		Rate: info.Rate, Producers: info.Producers, Connections: info.Connections, DeliverRate: info.DeliverRate}
	p.respond(m, r)
	p.stopStep()
	p.cur = p.startStep(ctx, cmd, info)
	p.last = stepReply{run: cmd.Run, step: cmd.Step, reply: r}
	p.history.accepted(stepKey{cmd.Run, cmd.Step}, time.Now())
	p.reg.setStep(cmd.Run, cmd.Step)
	p.log.Info("producer: step started", "run", cmd.Run, "step", cmd.Step, "rate", info.Rate,
		"producers", info.Producers, "connections", info.Connections, "warmup", time.Duration(info.Warmup), "duration", time.Duration(info.Duration))
}

// share is the step as this producer runs it: its part of the rate, see
// messages.StepCommand.ShareFor. The live producers are counted only when the
// rate is divided by them. If the registry bucket is gone (a NATS restart
// loses it), share recreates it, registers again and counts once more.
func (p *Producer) share(ctx context.Context, cmd messages.StepCommand) (messages.StepInfo, error) {
	n := cmd.Producers
	if n == 0 {
		live, err := p.reg.live(ctx)
		if bucketGone(err) {
			if err = p.reg.recreate(ctx); err == nil {
				live, err = p.reg.live(ctx)
			}
		}
		if err != nil && cmd.ProducerRate == 0 {
			return messages.StepInfo{}, fmt.Errorf("%w to share the rate: %w", errNoCount, err)
		}
		n = live
	}
	return messages.StepInfo{
		FleetRate: cmd.Rate, Rate: cmd.ShareFor(n), Producers: n, Connections: cmd.ConnectionsFor(n),
		FleetDeliverRate: cmd.DeliverRate, DeliverRate: cmd.DeliverShareFor(n),
		Warmup: int64(cmd.WarmupOrDefault()), Duration: int64(cmd.Duration.D()),
	}, nil
}

// refuse answers a refused command — on its reply subject when it is a
// request, else on messages.StepRefusedSubject, so that a command sent with
// `nats pub` is not refused in silence — and logs it at most once per
// refusalEvery and kind of error (see refusalLog).
func (p *Producer) refuse(m *nats.Msg, cmd messages.StepCommand, err error) {
	kind := refusalKind(err)
	if ok, suppressed := p.refusals.allow(kind, time.Now()); ok {
		p.log.Warn("producer: step command refused", "kind", kind, "err", err,
			"suppressed", suppressed, "log_every", refusalEvery)
	}
	problems := messages.StepProblems(err)
	r := messages.StepReply{Producer: p.cfg.ID, Error: strings.Join(problems, "; "), Problems: problems}
	if messages.ValidName(cmd.Run) == nil && cmd.Step > 0 && cmd.Step <= messages.MaxStep {
		r.Run, r.Step = cmd.Run, cmd.Step
	}
	if m.Reply == "" {
		p.publishReply(messages.StepRefusedSubject, r)
		return
	}
	p.respond(m, r)
}

// respond sends r as JSON to m's reply subject, if it has one (a plain
// `nats pub` has none).
func (p *Producer) respond(m *nats.Msg, r messages.StepReply) {
	if m.Reply != "" {
		p.publishReply(m.Reply, r)
	}
}

// publishReply publishes r as JSON on subject. '<', '>' and '&' are
// written as they are, not as \u003c…: an operator reads these replies.
func (p *Producer) publishReply(subject string, r messages.StepReply) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(r)
	if err == nil {
		err = p.nc.Publish(subject, bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	}
	if err != nil {
		p.log.Warn("producer: step reply", "subject", subject, "err", err)
	}
}

// stopStep ends the running step, if any, after its final batch.
func (p *Producer) stopStep() {
	if p.cur == nil {
		return
	}
	p.cur.stop()
	p.cur = nil
	p.reg.setStep("", 0)
}

// runningNow reports whether a step is running: started and not done.
func (p *Producer) runningNow() bool {
	if p.cur == nil {
		return false
	}
	select {
	case <-p.cur.done:
		return false
	default:
		return true
	}
}

// sameStep reports whether b is a repeat of a, the command being run: the
// same step, offered alike.
func sameStep(a, b messages.StepCommand) bool {
	ja, errA := json.Marshal(a.Normalized())
	jb, errB := json.Marshal(b.Normalized())
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// refusalEvery is how often at most a refusal of one kind is logged: a
// controller sending bad commands in a loop (1,000 a second) must not fill
// the disk, while every request still gets its answer.
const refusalEvery = 10 * time.Second

// refusalKind is the kind of a refusal's error, one of a fixed few, so that
// the refusal log keeps a bounded state.
func refusalKind(err error) string {
	switch {
	case errors.Is(err, messages.ErrInvalidStep):
		return "invalid step command"
	case errors.Is(err, errNoCount):
		return "cannot count producers"
	case errors.Is(err, errStepReused):
		return "step already commanded"
	}
	return "other"
}

// refusalLog decides which refusals are logged: the first of each kind,
// then at most one per refusalEvery, which says how many of that kind were
// not logged since the previous line. Time is an argument; the control
// loop is its only user.
type refusalLog struct {
	kinds map[string]*refusals
}

type refusals struct {
	next       time.Time // the earliest the next line of this kind may be logged
	suppressed uint64    // refusals of this kind not logged since the last line
}

// allow reports whether a refusal of kind at now is logged and, if it is,
// how many of its kind were suppressed before it.
func (l *refusalLog) allow(kind string, now time.Time) (bool, uint64) {
	if l.kinds == nil {
		l.kinds = map[string]*refusals{}
	}
	r := l.kinds[kind]
	if r == nil {
		r = &refusals{}
		l.kinds[kind] = r
	}
	if now.Before(r.next) {
		r.suppressed++
		return false, 0
	}
	n := r.suppressed
	r.next, r.suppressed = now.Add(refusalEvery), 0
	return true, n
}
