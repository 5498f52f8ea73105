package bus

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// TestRetrySetup: an unavailable JetStream (no answer in time, or 503 while a
// cluster elects its leader) is waited for; any other error is returned at
// once, and so is the last error when the caller's context ends.
func TestRetrySetup(t *testing.T) {
	unavailableErr := &jetstream.APIError{Code: 503, ErrorCode: 10008, Description: "JetStream system temporarily unavailable"}
	other := errors.New("stream name already in use with a different configuration")
	tests := []struct {
		name      string
		errs      []error // one per attempt; nil succeeds
		wantCalls int
		wantErr   error
	}{
		{"answers at once", []error{nil}, 1, nil},
		{"no answer, then the stream", []error{context.DeadlineExceeded, fmt.Errorf("%w: x: %w", ErrSetup, context.DeadlineExceeded), nil}, 3, nil},
		{"503 while electing, then the stream", []error{unavailableErr, nil}, 2, nil},
		{"another error: at once", []error{other, nil}, 1, other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			_, err := retrySetup(context.Background(), func(context.Context) (int, error) {
				calls++
				return calls, tt.errs[calls-1]
			})
			if calls != tt.wantCalls || !errors.Is(err, tt.wantErr) {
				t.Errorf("retrySetup() made %d calls, error %v; want %d, %v", calls, err, tt.wantCalls, tt.wantErr)
			}
		})
	}
	t.Run("caller's context ends", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		calls := 0
		_, err := retrySetup(ctx, func(context.Context) (int, error) {
			calls++
			cancel()
			return 0, context.DeadlineExceeded
		})
		if calls != 1 || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("retrySetup() made %d calls, error %v; want 1 and the last error", calls, err)
		}
	})
}
