package aggregator

import (
	"context"
	"fmt"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/nats-io/nats.go/jetstream"
)

// replayBatch is how many messages one fetch of a replay asks for.
const replayBatch = 256

// replayResets bounds how often a replay re-creates its consumer (about
// 1+2+4 s of back-off) before it fails and its caller tries again.
const replayResets = 3

// replay opens the step cmd started by reading every batch of it stored so far, in stream
// order, with an ordered consumer. Whatever this aggregator, or one before
// it, acknowledged earlier is pooled again: that is what makes a restart
// mid-step give the same result.
func (a *Aggregator) replay(ctx context.Context, cmd messages.StepCommand) (*openStep, error) {
	st := newOpenStep(cmd, a.opts.poolOptions())
	k := st.key
	err := a.readAll(ctx, messages.SamplesStream, messages.StepSamplesFilter(k.run, k.step),
		func(m jetstream.Msg, md *jetstream.MsgMetadata) {
			_, _ = st.absorb(md.Sequence.Stream, md.Timestamp, m.Subject(), msgID(m), m.Data())
		})
	if err != nil {
		return nil, fmt.Errorf("aggregator: replay run %s step %d: %w", k.run, k.step, err)
	}
	return st, nil
}

// loadRun learns which steps of run already have a result in the results
// stream, once per run, so that a restarted aggregator never publishes a
// step twice.
func (a *Aggregator) loadRun(ctx context.Context, run string) error {
	if a.runs[run] {
		return nil
	}
	subject := messages.ResultsSubject(run)
	ictx, cancel := context.WithTimeout(ctx, ioTimeout)
	defer cancel()
	info, err := a.results.Info(ictx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		return fmt.Errorf("aggregator: results of run %s: %w", run, err)
	}
	if info.State.Subjects[subject] > 0 {
		err = a.readAll(ctx, messages.ResultsStream, subject, func(m jetstream.Msg, _ *jetstream.MsgMetadata) {
			if r, err := messages.DecodeResult(m.Data()); err == nil { // run reports are skipped
				k := stepKey{run, r.Step}
				a.closed[k] = a.closed[k].later(publishedOf(r))
			}
		})
		if err != nil {
			return fmt.Errorf("aggregator: results of run %s: %w", run, err)
		}
	}
	a.runs[run] = true
	return nil
}

// readAll passes every message of stream matching filter, as of now, to each.
func (a *Aggregator) readAll(ctx context.Context, stream, filter string, each func(jetstream.Msg, *jetstream.MsgMetadata)) error {
	ctx, cancel := context.WithTimeout(ctx, ioTimeout)
	defer cancel()
	// Every fetch of an ordered consumer first re-creates its consumer, and
	// by default retries that without end (ctx does not reach it): after a
	// cluster node is lost that was seen to hang a reader for 30 minutes. A
	// replay is bounded; the caller tries again.
	oc, err := a.js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{
		FilterSubjects:    []string{filter},
		InactiveThreshold: 10 * time.Second,
		MaxResetAttempts:  replayResets,
	})
	if err != nil {
		return err
	}
	defer a.deleteConsumer(ctx, stream, oc)
	for ctx.Err() == nil {
		batch, err := oc.FetchNoWait(replayBatch)
		if err != nil {
			return err
		}
		n, pending := 0, uint64(0)
		for m := range batch.Messages() {
			md, err := m.Metadata()
			if err != nil {
				continue
			}
			each(m, md)
			n, pending = n+1, md.NumPending
		}
		if err := batch.Error(); err != nil {
			return err
		}
		if n == 0 || pending == 0 {
			return nil
		}
	}
	return ctx.Err()
}

// deleteConsumer removes a finished ordered consumer at once, rather than
// after its inactivity threshold, so that replays never pile up towards the
// server's limit of consumers per stream.
func (a *Aggregator) deleteConsumer(ctx context.Context, stream string, oc jetstream.Consumer) {
	info := oc.CachedInfo()
	if info == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ioTimeout)
	defer cancel()
	_ = a.js.DeleteConsumer(ctx, stream, info.Name)
}
