package producer_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/internal/testkit"
)

// TestOutageStopWithNATSDown stops a producer in the middle of a step with
// NATS down for good and a retry budget of an hour (an operator's
// --publish-retry): Run must return after its sessions drain and the
// step's shutdown grace (5 s), not after the budget, and say that the
// batches it could not send are lost.
func TestOutageStopWithNATSDown(t *testing.T) {
	t.Parallel() // waits on NATS outages and timeouts, with servers of its own
	f, srv := outageFleet(t)
	var logs testkit.Buffer
	opts := f.options("s1", 2)
	opts.PublishRetry = time.Hour
	opts.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	r := f.startOn(srv, opts)
	f.waitLive(1)
	col := f.collect("stop", 1)
	f.request(`{"run":"stop","step":1,"rate":20,"warmup":"100ms","duration":"1m","stagger":"50ms"}`, 1)
	testkit.WaitFor(t, 10*time.Second, "two batches of the step", func() bool {
		bs, _ := col.snapshot()
		return len(bs["s1"]) >= 2
	})
	srv.Shutdown()
	start := time.Now()
	if err := r.stop(t); err != nil { // fails the test if Run takes 20 s: an hour without the grace
		t.Fatalf("Run() error = %v", err)
	}
	t.Logf("Run returned %v after cancel with NATS down", time.Since(start).Round(time.Millisecond))
	if !strings.Contains(logs.String(), "lost") {
		t.Errorf("no batch reported lost after a stop with NATS down; log:\n%s", logs.String())
	}
}
