package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
)

// faultRefusalEvery is the producer's refusal log interval
// (producer.refusalEvery): one line per kind of refusal per interval.
const faultRefusalEvery = 10 * time.Second

// malformedCommand is the i-th of four malformed step commands, all of the
// kind "invalid step command".
func malformedCommand(i int) string {
	switch i % 4 {
	case 0:
		return fmt.Sprintf("not json %d", i)
	case 1:
		return fmt.Sprintf(`{"run":"flood","step":%d,"rate":-1,"duration":"1s"}`, i%9+1)
	case 2:
		return fmt.Sprintf(`{"run":"a.b","step":%d,"rate":5,"duration":"1s"}`, i%9+1)
	}
	return fmt.Sprintf(`{"run":"flood","step":1,"rate":5,"duration":"1s","bogus":%d}`, i)
}

// floodUnanswered bounds the flood's requests not answered yet: well under
// the producer's queue of step commands (producer.stepQueue, 64), beyond
// which it drops them by design. Without the bound, a busy machine that
// kept the producer from running for 64 ms made it drop some, and the test
// waited in vain for their refusals.
const floodUnanswered = 32

// TestFaultRefusalFlood is issue 10's finding 8 with a real producer
// process: 10,000 malformed step commands are sent as requests at about
// 1,000/s (slower only when the producer is kept from answering: at most
// floodUnanswered wait for a reply). Each gets a refusal with an error, and
// the producer's stderr grows by at most one line per interval of its
// refusal log (with the count of the refusals not logged), however many
// commands came.
func TestFaultRefusalFlood(t *testing.T) {
	testkit.Require(t, testkit.Long)
	t.Parallel()
	const flood = 10_000
	f := startFaultFleet(t, faultOptions{name: "frefuse", producers: 1})
	p := f.producers[0]
	before := strings.Count(p.stderr.String(), "\n")

	var refused, other atomic.Int64
	window := make(chan struct{}, floodUnanswered)
	inbox := nats.NewInbox()
	subscribe(t, f.nc, inbox, func(m *nats.Msg) {
		var r messages.StepReply
		if json.Unmarshal(m.Data, &r) == nil && !r.Accepted && r.Error != "" {
			refused.Add(1)
		} else {
			other.Add(1)
		}
		select {
		case <-window:
		default:
		}
	})
	start := time.Now()
	for i := range flood {
		if ahead := time.Until(start.Add(time.Duration(i) * time.Millisecond)); ahead > 0 {
			time.Sleep(ahead) // the pace of the flood, 1,000/s: not a wait for a result
		}
		select {
		case window <- struct{}{}:
		case <-time.After(30 * time.Second):
			t.Fatalf("no reply for 30 s with %d requests unanswered, after %d sent and %d answered", floodUnanswered, i, refused.Load()+other.Load())
		}
		if err := f.nc.PublishRequest(messages.StepSubject, inbox, []byte(malformedCommand(i))); err != nil {
			t.Fatalf("PublishRequest: %v", err)
		}
	}
	testkit.WaitFor(t, time.Minute, fmt.Sprintf("%d refusals", flood), func() bool { return refused.Load()+other.Load() >= flood })
	elapsed := time.Since(start)
	if refused.Load() != flood || other.Load() != 0 {
		t.Errorf("%d refusals with an error and %d other replies to %d malformed commands, want %d refusals", refused.Load(), other.Load(), flood, flood)
	}
	checkRefusalLog(t, p.stderr.String(), before, flood, elapsed)
}

// suppressedRe is the count a refusal line carries of those not logged.
var suppressedRe = regexp.MustCompile(`suppressed=(\d+)`)

// checkRefusalLog checks that the refusal lines number at most one per
// refusal interval of the flood (one kind), that together with the counts
// they carry they account for no more refusals than were sent, and that the
// rest of stderr did not grow by more than a line per interval either.
func checkRefusalLog(t *testing.T, stderr string, before, flood int, elapsed time.Duration) {
	t.Helper()
	most := 1 + int(elapsed/faultRefusalEvery)
	lines, accounted := 0, 0
	for _, l := range strings.Split(stderr, "\n") {
		if !strings.Contains(l, "step command refused") {
			continue
		}
		lines++
		if m := suppressedRe.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			accounted += 1 + n
		}
	}
	grew := strings.Count(stderr, "\n") - before
	t.Logf("%d refusals in %v: %d refusal log lines (at most %d), %d refusals accounted by them, stderr grew by %d lines, %d bytes in all",
		flood, elapsed.Round(time.Millisecond), lines, most, accounted, grew, len(stderr))
	if lines < 1 || lines > most {
		t.Errorf("%d refusal log lines for %d refusals in %v, want 1 to %d (one kind, one line per %v)\n%s", lines, flood, elapsed, most, faultRefusalEvery, tail(stderr, 20))
	}
	if accounted > flood {
		t.Errorf("the refusal lines account for %d refusals, more than the %d sent", accounted, flood)
	}
	if grew > 2*most {
		t.Errorf("producer stderr grew by %d lines during %d refusals, want at most %d\n%s", grew, flood, 2*most, tail(stderr, 20))
	}
}
