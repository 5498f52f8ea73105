package aggregator

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/messages"
)

// The server's own figures, from the observers (imapload observe): each
// announces a step when it starts and publishes its figures when the
// window ends, in messages.ServerStream. A step ready to be published
// waits for the figures of every observer that announced it, at most
// Options.ServerWait; a step that no observer announced waits for nothing.

// serverLookup bounds one look at the server stream.
const serverLookup = 3 * time.Second

// serverFor returns the server figures to attach to st's result, and
// whether the result may be published now: when no observer announced the
// step, when every one that did sent its figures, or when ServerWait has
// passed since the step was first ready (the late ones are then listed as
// missing). A stream that cannot be read delays nothing: the result goes
// out without figures, with a warning.
func (a *Aggregator) serverFor(ctx context.Context, st *openStep) (*messages.ServerResult, bool) {
	now := a.now()
	if st.serverBy.IsZero() {
		st.serverBy = now.Add(a.opts.serverWait())
	}
	seen, err := a.readServer(ctx, st.key)
	if err != nil {
		a.warn.warn("aggregator: cannot read the server figures; the result goes out without them",
			"run", st.key.run, "step", st.key.step, "err", err)
		return nil, true
	}
	if len(seen.announced) > len(seen.final) && now.Before(st.serverBy) {
		return nil, false
	}
	return seen.result(), true
}

// serverSeen is what the server stream holds of one step.
type serverSeen struct {
	announced map[string]bool
	final     map[string]*messages.ServerFigures
}

// readServer reads every observer's messages of step k; none when the
// stream does not exist.
func (a *Aggregator) readServer(ctx context.Context, k stepKey) (serverSeen, error) {
	seen := serverSeen{announced: map[string]bool{}, final: map[string]*messages.ServerFigures{}}
	lctx, cancel := context.WithTimeout(ctx, serverLookup)
	defer cancel()
	if _, err := a.js.Stream(lctx, messages.ServerStream); errors.Is(err, jetstream.ErrStreamNotFound) {
		return seen, nil
	} else if err != nil {
		return seen, err
	}
	err := a.readAll(ctx, messages.ServerStream, messages.StepServerFilter(k.run, k.step), func(m jetstream.Msg, _ *jetstream.MsgMetadata) {
		f, err := messages.DecodeServerFigures(m.Data())
		if err != nil || f.Run != k.run || f.Step != k.step || m.Subject() != messages.ServerSubject(f.Run, f.Step, f.Observer) {
			a.warn.warn("aggregator: bad server figures ignored", "subject", m.Subject(), "err", err)
			return
		}
		seen.announced[f.Observer] = true
		if f.Final {
			seen.final[f.Observer] = f
		}
	})
	return seen, err
}

// result is the figures to attach: every final observer's endpoints, by
// observer; nil when no observer announced the step.
func (s serverSeen) result() *messages.ServerResult {
	if len(s.announced) == 0 {
		return nil
	}
	r := &messages.ServerResult{Observers: []string{}, Endpoints: []messages.EndpointFigures{}}
	for _, id := range slices.Sorted(maps.Keys(s.announced)) {
		f, ok := s.final[id]
		if !ok {
			r.Missing = append(r.Missing, id)
			continue
		}
		r.Observers = append(r.Observers, id)
		if f.StoppedEarly {
			r.StoppedEarly = append(r.StoppedEarly, id)
		}
		for _, e := range f.Endpoints {
			e.Observer = id
			r.Endpoints = append(r.Endpoints, e)
		}
	}
	return r
}

func (o *Options) serverWait() time.Duration {
	if o == nil || o.ServerWait <= 0 {
		return 10 * time.Second
	}
	return o.ServerWait
}
