package aggregator_test

import (
	"fmt"
	"time"

	"github.com/imapload/imapload/aggregator"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// Two producers did unequal work: the pool weighs each latency once, so the
// slow producer's 10 commands do not count as much as the fast one's 90.
func ExamplePool() {
	info := messages.StepInfo{FleetRate: 100, Rate: 50, Producers: 2, Duration: int64(time.Second)}
	pool := aggregator.NewPool("r1", 1, nil)
	for id, spec := range map[string]struct {
		n       int
		latency time.Duration
	}{"fast": {90, time.Millisecond}, "slow": {10, 50 * time.Millisecond}} {
		rec := recorder.New("r1", 1, id, info, &recorder.Options{Seed: 1})
		for range spec.n {
			rec.Record(messages.Fetch, spec.latency, spec.latency)
			rec.Scheduled(true)
		}
		if _, err := pool.Add(rec.Cut(0, time.Second, true, messages.Health{})); err != nil {
			fmt.Println(err)
		}
	}
	r := pool.Result()
	fetch := r.Phases["fetch"]
	fmt.Printf("delivered %.0f/s of %.0f/s, complete %v\n", r.DeliveredRate, r.TargetRate, r.Complete)
	fmt.Printf("fetch: %d latencies, p50 %.1f ms, p90 %.1f ms, p99 %.1f ms\n", fetch.Count, fetch.P50, fetch.P90, fetch.P99)
	// Output:
	// delivered 100/s of 100/s, complete true
	// fetch: 100 latencies, p50 1.0 ms, p90 1.0 ms, p99 49.8 ms
}
