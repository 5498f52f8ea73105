package pipeline_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/imapload/imapload/aggregator"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/internal/testkit/natstest"
	"github.com/imapload/imapload/pipeline"
	"github.com/nats-io/nats.go"
)

// TestRunJoinsFleet: on another NATS where an aggregator already consumes,
// Run starts none of its own (two would each pool part of a step) and its
// step is pooled by the fleet's.
func TestRunJoinsFleet(t *testing.T) {
	ns, nc := natstest.Start(t)
	if consuming, err := pipeline.AggregatorConsuming(context.Background(), nc); err != nil || consuming {
		t.Fatalf("AggregatorConsuming() on a new NATS = %v, %v; want false", consuming, err)
	}
	stop := startAggregator(t, ns.ClientURL())
	testkit.WaitFor(t, time.Minute, "the fleet's aggregator to consume", func() bool {
		consuming, err := pipeline.AggregatorConsuming(context.Background(), nc)
		return err == nil && consuming
	})
	srv := startIMAP(t)
	o := shortRun(t, srv, 1)
	o.NATS = ns.ClientURL()
	var started []bool
	o.OnReady = func(e pipeline.Endpoint) { started = append(started, e.Aggregator) }
	results, err := runCtx(t, o)
	if err != nil {
		t.Fatalf("Run() error = %v", err)
	}
	checkProducers(t, results, []string{o.Run + "-p1"})
	if len(started) != 1 || started[0] {
		t.Errorf("OnReady's Aggregator = %v, want one call saying none was started", started)
	}
	stop()
}

// startAggregator runs a fleet's aggregator on url until the returned stop
// (or the test's end).
func startAggregator(t *testing.T, url string) func() {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	a, err := aggregator.New(nc, &aggregator.Options{StepTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	done := make(chan struct{})
	go func() { defer close(done); _ = a.Run(ctx) }()
	stop := func() { once.Do(func() { cancel(); <-done; nc.Close() }) }
	t.Cleanup(stop)
	return stop
}

// TestAggregatorConsumingStopped: the durable left by a stopped aggregator
// is not a consuming one, so a new run starts its own (which resumes it).
func TestAggregatorConsumingStopped(t *testing.T) {
	ns, nc := natstest.Start(t)
	stop := startAggregator(t, ns.ClientURL())
	testkit.WaitFor(t, time.Minute, "the aggregator to consume", func() bool {
		consuming, err := pipeline.AggregatorConsuming(context.Background(), nc)
		return err == nil && consuming
	})
	stop()
	testkit.WaitFor(t, 2*time.Minute, "the stopped aggregator's durable to have no pull waiting", func() bool {
		consuming, err := pipeline.AggregatorConsuming(context.Background(), nc)
		return err == nil && !consuming
	})
}
