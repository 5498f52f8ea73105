package bus

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Waiting for JetStream. A cluster's nodes elect a meta leader for a few
// seconds after they start, and until then JetStream's API answers nothing
// (or "temporarily unavailable"); a role started beside them (compose,
// Kubernetes) would exit at once. So each set-up call is retried while
// JetStream is unavailable, for at most setupWait in all; any other error
// (a stream with a conflicting name, a server without JetStream) is
// returned at once.
const (
	setupWait    = time.Minute
	setupAttempt = 5 * time.Second // one attempt's wait for an answer
	setupBackoff = 250 * time.Millisecond
	setupCap     = 4 * time.Second
)

// retrySetup calls f until it succeeds, fails for another reason than an
// unavailable JetStream, setupWait has passed, or ctx ends.
func retrySetup[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	deadline := time.Now().Add(setupWait)
	for wait := setupBackoff; ; wait = min(2*wait, setupCap) {
		actx, cancel := context.WithTimeout(ctx, setupAttempt)
		v, err := f(actx)
		cancel()
		if err == nil || ctx.Err() != nil || !unavailable(err) || time.Now().Add(wait).After(deadline) {
			return v, err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return v, err
		}
	}
}

// unavailable reports whether err says JetStream did not answer or is not
// available yet, as while a cluster elects its leader.
func unavailable(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		(errors.As(err, &apiErr) && apiErr.Code == http.StatusServiceUnavailable)
}
