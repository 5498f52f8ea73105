package observe

import (
	"context"
	"encoding/json"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/messages"
)

// message is the observer's message about cmd's step: the announcement
// (eps nil: the endpoints listed, no figures) or the figures of eps.
func (ob *Observer) message(cmd messages.StepCommand, eps []*endpoint, stopped bool) *messages.ServerFigures {
	f := &messages.ServerFigures{
		Kind: messages.KindServerFigures, Run: cmd.Run, Step: cmd.Step, Observer: ob.opts.ID,
		Final: eps != nil, StoppedEarly: stopped,
		Interval: messages.Duration(ob.opts.Interval), Window: cmd.Duration,
	}
	for i, s := range ob.scrapers {
		ef := messages.EndpointFigures{URL: s.shown, Figures: []messages.Figure{}}
		if eps != nil {
			ef = eps[i].figures()
		}
		f.Endpoints = append(f.Endpoints, ef)
	}
	return f
}

// publishRetry is the pause between two tries to publish.
const publishRetry = 500 * time.Millisecond

// send publishes f with its message id, so that a retry is stored once,
// trying again until Options.PublishWait has passed; it reports whether f
// was stored. ctx ending does not stop it: the figures of a step cut short
// are published too.
func (ob *Observer) send(ctx context.Context, f *messages.ServerFigures) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ob.opts.PublishWait)
	defer cancel()
	msg := nats.NewMsg(messages.ServerSubject(f.Run, f.Step, f.Observer))
	msg.Header.Set(bus.ContentType, bus.JSONType)
	msg.Data = encode(f)
	id := messages.ServerMsgID(f.Run, f.Step, f.Observer, f.Final)
	for {
		_, err := ob.js.PublishMsg(ctx, msg, jetstream.WithMsgID(id))
		if err == nil {
			return true
		}
		if !sleepUntil(ctx, time.Now().Add(publishRetry)) {
			ob.log.Warn("observe: publishing the server figures failed", "run", f.Run, "step", f.Step, "final", f.Final, "err", err)
			return false
		}
	}
}

// encode is f as JSON, at most messages.MaxServerBytes: while it is
// larger, every endpoint keeps half its figures (counted as omitted).
func encode(f *messages.ServerFigures) []byte {
	for {
		data, err := json.Marshal(f) // every figure is finite: it cannot fail
		if err != nil || len(data) <= messages.MaxServerBytes || !anyFigures(f) {
			return data
		}
		for i := range f.Endpoints {
			e := &f.Endpoints[i]
			keep := len(e.Figures) / 2
			e.Omitted += len(e.Figures) - keep
			e.Figures = e.Figures[:keep]
		}
	}
}

func anyFigures(f *messages.ServerFigures) bool {
	for _, e := range f.Endpoints {
		if len(e.Figures) > 0 {
			return true
		}
	}
	return false
}
