package bus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/messages"
)

// maxRunResults bounds how many results of one run RunResults reads: far
// more steps than a run has, each one read as its headers only.
const maxRunResults = 10_000

// resultsTimeout bounds RunResults as a whole.
const resultsTimeout = 5 * time.Second

// RunResults returns the steps of run that have a result in the results
// stream, each with when its first result was stored (the stream's clock,
// UTC). It reads the messages' headers only (the result's id names its
// step, messages.ResultMsgID), so it is cheap even for a long run. A
// results stream that does not exist yet holds no result.
func RunResults(ctx context.Context, js jetstream.JetStream, run string) (map[int]time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, resultsTimeout)
	defer cancel()
	st, err := js.Stream(ctx, messages.ResultsStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("bus: results of run %s: %w", run, err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(messages.ResultsSubject(run)))
	if err != nil {
		return nil, fmt.Errorf("bus: results of run %s: %w", run, err)
	}
	n := info.State.Subjects[messages.ResultsSubject(run)]
	if n == 0 {
		return nil, nil
	}
	return readRunResults(ctx, st, run, min(n, maxRunResults))
}

// readRunResults reads the first n messages of run's results subject,
// headers only.
func readRunResults(ctx context.Context, st jetstream.Stream, run string, n uint64) (map[int]time.Time, error) {
	oc, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{messages.ResultsSubject(run)}, HeadersOnly: true,
	})
	if err != nil {
		return nil, fmt.Errorf("bus: results of run %s: %w", run, err)
	}
	out := map[int]time.Time{}
	for read := uint64(0); read < n; {
		batch, err := oc.Fetch(int(min(n-read, 256)), jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return nil, fmt.Errorf("bus: results of run %s: %w", run, err)
		}
		got := 0
		for m := range batch.Messages() {
			got++
			noteResult(out, m)
		}
		if batch.Error() != nil || got == 0 {
			return out, batch.Error() // what was read; the stream may have lost some since Info
		}
		read += uint64(got)
	}
	return out, nil
}

// noteResult notes m's step when it is a step result (a run report is not).
func noteResult(out map[int]time.Time, m jetstream.Msg) {
	_, step, _, ok := messages.ParseResultMsgID(m.Headers().Get(jetstream.MsgIDHeader))
	if !ok {
		return
	}
	md, err := m.Metadata()
	if err != nil {
		return
	}
	if t, seen := out[step]; !seen || md.Timestamp.Before(t) {
		out[step] = md.Timestamp.UTC()
	}
}
