package fleetbench

import (
	"fmt"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// fleetSizes are the producers of BenchmarkFleet's sub-benchmarks.
var fleetSizes = []int{50, 100, 250, 500}

// benchStep is a short step at 300 commands/s per producer, the rate of
// messages' "flush-1s" batch: 1 s of warm-up, a 5 s window.
var benchStep = stepSpec{rate: 300, warmup: time.Second, window: 5 * time.Second}

// BenchmarkFleet drives N simulated producers through one NATS server into
// the real aggregator, one step per iteration (see doc.go):
//
//	go test ./internal/fleetbench -run '^$' -bench Fleet -benchtime 1x -count 3
//
// result-ms is the worst wait, over the iterations, from the last final
// batch's ack to the step result; agg-hwm-MiB the aggregator process's peak
// resident set (VmHWM) and agg-heap-MiB the peak of its Go heap in use,
// sampled every 10 ms; lost the batches sent and not pooled; B/batch the
// mean size of a batch cut in the window; result-KiB the step result's JSON.
// ns/op is a whole step, set by its warm-up and window.
func BenchmarkFleet(b *testing.B) {
	for _, n := range fleetSizes {
		b.Run(fmt.Sprintf("producers=%d", n), func(b *testing.B) {
			f := startFleet(b, n)
			var worst, sum figures
			steps := 0
			for b.Loop() {
				steps++
				fig := f.step(b, "fleet", steps, benchStep)
				worst.result = max(worst.result, fig.result)
				worst.list, worst.gather = max(worst.list, fig.list), max(worst.gather, fig.gather)
				sum.lost += fig.lost
				sum.pooled += fig.pooled
				sum.size = max(sum.size, fig.size)
				sum.sent.bytes += fig.sent.bytes
				sum.sent.inWindow += fig.sent.inWindow
				sum.sent.winBytes += fig.sent.winBytes
			}
			hwm, _, err := f.agg.memory()
			if err != nil {
				b.Fatalf("aggregator memory: %v", err)
			}
			f.agg.stop(b)
			seconds := float64(steps*n) * (benchStep.warmup + benchStep.window).Seconds()
			b.ReportMetric(float64(worst.result)/1e6, "result-ms")
			b.ReportMetric(float64(hwm)/(1<<20), "agg-hwm-MiB")
			b.ReportMetric(float64(f.agg.heap)/(1<<20), "agg-heap-MiB")
			b.ReportMetric(float64(sum.lost), "lost")
			b.ReportMetric(float64(sum.pooled)/float64(steps), "batches/step")
			b.ReportMetric(float64(worst.list)/1e6, "list-ms")
			b.ReportMetric(float64(worst.gather)/1e6, "replies-ms")
			b.ReportMetric(float64(sum.sent.bytes)/seconds, "B/producer-s")
			b.ReportMetric(float64(sum.sent.winBytes)/float64(max(sum.sent.inWindow, 1)), "B/batch")
			b.ReportMetric(float64(sum.size)/1024, "result-KiB")
		})
	}
}

// TestFleet runs a small fleet through one short step: every producer
// answers, every batch is pooled, the result names every producer.
func TestFleet(t *testing.T) {
	f := startFleet(t, 4)
	fig := f.step(t, "fleet-test", 1, stepSpec{rate: 100, window: time.Second})
	t.Logf("4 producers: %d batches pooled; result %v after the last final batch's ack", fig.pooled, fig.result)
}

// batchRates are producer rates, commands/s, whose one-second batch
// BenchmarkBatch sizes.
var batchRates = []float64{100, 300, 1000, 3000, 10000}

// BenchmarkBatch cuts and encodes a producer's one-second batch at each
// rate, with the workload of BenchmarkFleet and the recorder's default
// reservoir, and reports its size: what one producer sends a second. ns/op
// includes drawing and recording the simulated commands.
//
//	go test ./internal/fleetbench -run '^$' -bench Batch -benchtime 20x
func BenchmarkBatch(b *testing.B) {
	for _, rate := range batchRates {
		b.Run(fmt.Sprintf("rate=%g", rate), func(b *testing.B) {
			info := messages.StepInfo{FleetRate: rate, Rate: rate, Producers: 1, Warmup: 0, Duration: int64(time.Hour)}
			rec := recorder.New("r1", 1, "loadhost-17", info, nil)
			work := newWorkload(rate, 1)
			size := 0
			for i := 0; b.Loop(); i++ {
				from := time.Duration(i) * time.Second
				work.record(rec, from, from+time.Second)
				data, err := messages.EncodeBatch(rec.Cut(from, from+time.Second, false, health()))
				if err != nil {
					b.Fatalf("EncodeBatch() error = %v", err)
				}
				size = len(data)
			}
			b.ReportMetric(float64(size), "B/batch")
		})
	}
}
