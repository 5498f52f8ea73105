package producer_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/internal/testkit"
)

// TestOutageRefusalFlood sends a flood of bad step commands, in two forms of
// one kind (invalid step command): every one is answered, and the producer
// logs one line for the kind per refusal interval, not one per command.
func TestOutageRefusalFlood(t *testing.T) {
	t.Parallel()      // waits on NATS outages and timeouts, with servers of its own
	const flood = 200 // commands of each kind
	f := newFleet(t, &embedded.IMAPOptions{Users: 4})
	var logs testkit.Buffer
	opts := f.options("c1", 2)
	opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	f.start(opts)
	f.waitLive(1)
	start := time.Now()
	for i := range flood {
		for _, cmd := range []string{fmt.Sprintf(`not json %d`, i), fmt.Sprintf(`{"run":"flood","step":%d,"rate":-1}`, i%9+1)} {
			if rep := f.request(cmd, 1)[0]; rep.Accepted || rep.Error == "" {
				t.Fatalf("reply to %s = %+v, want refused with an error", cmd, rep)
			}
		}
	}
	const refusalEvery = 10 * time.Second // the producer's interval
	most := 1 + int(time.Since(start)/refusalEvery)
	if lines := strings.Count(logs.String(), "step command refused"); lines < 1 || lines > most {
		t.Errorf("%d refusal log lines after %d refused commands, want 1 to %d (one kind); log:\n%.2000s",
			lines, 2*flood, most, logs.String())
	}
}
