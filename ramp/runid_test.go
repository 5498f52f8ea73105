package ramp

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
)

// TestNoResultHint: a missing result asks whether an aggregator is running
// only when none answered this ramp; once one has, it says the aggregator
// is running and where to look.
func TestNoResultHint(t *testing.T) {
	cmd := messages.StepCommand{Run: "r1", Step: 2}
	for _, tt := range []struct {
		answered      bool
		want, wantNot string
	}{
		{false, "is an aggregator (imapload aggregator) running", "answered earlier steps"},
		{true, "the aggregator answered earlier steps, so it is running", "is an aggregator"},
	} {
		c := &Controller{answered: tt.answered}
		err := c.noResult(cmd, time.Minute)
		if !errors.Is(err, ErrNoResult) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), tt.wantNot) {
			t.Errorf("noResult() with answered = %v: %v, want ErrNoResult saying %q, not %q", tt.answered, err, tt.want, tt.wantNot)
		}
	}
}

// TestNoProducersCause: no answer asks for producers; refusals quote why.
func TestNoProducersCause(t *testing.T) {
	cmd := messages.StepCommand{Run: "r1", Step: 1}
	if err := noProducers(cmd, nil); !strings.Contains(err.Error(), "start producers") {
		t.Errorf("noProducers(no answer) = %v, want it to say start producers", err)
	}
	refused := []messages.StepReply{{Producer: "p1", Error: "run r1 step 1 already has a result"}}
	if err := noProducers(cmd, refused); !strings.Contains(err.Error(), "1 producer(s) refused it: run r1 step 1 already has a result") || strings.Contains(err.Error(), "start producers") {
		t.Errorf("noProducers(refused) = %v, want the refusal quoted", err)
	}
}
