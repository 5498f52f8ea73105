package producer

import (
	"fmt"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
)

// TestRefusalLogLimits checks the refusal log's rule with time as an
// argument: the first refusal of each kind is logged, then at most one per
// refusalEvery, carrying the count of those not logged since the last line.
func TestRefusalLogLimits(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	type call struct {
		kind           string
		at             time.Duration // after t0
		wantLog        bool
		wantSuppressed uint64
	}
	calls := []call{
		{"bad", 0, true, 0},
		{"bad", time.Millisecond, false, 0},
		{"other", 2 * time.Millisecond, true, 0}, // another kind has its own allowance
		{"bad", refusalEvery - time.Nanosecond, false, 0},
		{"bad", refusalEvery, true, 2},
		{"bad", refusalEvery + time.Second, false, 0},
		{"bad", 3 * refusalEvery, true, 1},
		{"other", 3 * refusalEvery, true, 0},
	}
	var l refusalLog
	for i, c := range calls {
		log, suppressed := l.allow(c.kind, t0.Add(c.at))
		if log != c.wantLog || suppressed != c.wantSuppressed {
			t.Errorf("call %d: allow(%q, t0+%v) = %v, %d; want %v, %d", i, c.kind, c.at, log, suppressed, c.wantLog, c.wantSuppressed)
		}
	}
}

// TestRefusalKinds checks that refusal kinds are a fixed few, whatever the
// detail of the error.
func TestRefusalKinds(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"invalid command", fmt.Errorf("%w: malformed JSON: x at offset %d", messages.ErrInvalidStep, 7), "invalid step command"},
		{"registry", fmt.Errorf("%w to share the rate: %w", errNoCount, fmt.Errorf("stream not found")), "cannot count producers"},
		{"anything else", fmt.Errorf("surprise %d", 42), "other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := refusalKind(tt.err); got != tt.want {
				t.Errorf("refusalKind(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}
