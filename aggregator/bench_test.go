package aggregator

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// encodedFleet is one final batch per producer, each with every phase
// holding perPhase latencies, recorded by the recorder (default reservoir of
// 1024) and encoded as the producers would publish them.
func encodedFleet(b *testing.B, producers, perPhase int) [][]byte {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	info := messages.StepInfo{FleetRate: 1e5, Rate: 100, Producers: producers, Duration: int64(30 * time.Second)}
	out := make([][]byte, producers)
	for i := range out {
		rec := recorder.New("r1", 1, "p"+strconv.Itoa(i), info, &recorder.Options{Seed: uint64(i + 1)})
		for _, ph := range messages.Phases() {
			for range perPhase {
				d := time.Duration(2e6 * math.Exp(0.7*rng.NormFloat64()))
				rec.Record(ph, d, d/2)
			}
		}
		data, err := messages.EncodeBatch(rec.Cut(0, 30*time.Second, true, messages.Health{Sessions: 10, CPU: 0.3}))
		if err != nil {
			b.Fatal(err)
		}
		out[i] = data
	}
	return out
}

// BenchmarkPool1000x8 is the aggregator's work for one step of a fleet of
// 1 000 producers measuring 8 phases: decode every batch, merge, and derive
// percentiles, intervals, bimodality and the per-producer breakdown.
func BenchmarkPool1000x8(b *testing.B) {
	for _, perPhase := range []int{100, 1000} {
		b.Run("latencies="+strconv.Itoa(perPhase), func(b *testing.B) {
			fleet := encodedFleet(b, 1000, perPhase)
			retained := retainedMiB(b, fleet)
			b.ReportAllocs()
			for b.Loop() {
				_ = fullPool(b, fleet).Result()
			}
			b.ReportMetric(retained, "pool-MiB")
		})
	}
}

// fullPool decodes and adds every batch of fleet.
func fullPool(b *testing.B, fleet [][]byte) *Pool {
	p := NewPool("r1", 1, nil)
	for _, data := range fleet {
		batch, err := messages.DecodeBatch(data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Add(batch); err != nil {
			b.Fatal(err)
		}
	}
	return p
}

// retainedMiB is the live heap a full pool holds between Adds and Result.
func retainedMiB(b *testing.B, fleet [][]byte) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p := fullPool(b, fleet)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(p)
	return float64(after.HeapAlloc-before.HeapAlloc) / (1 << 20)
}

// BenchmarkDecode1000x8 is the share of BenchmarkPool1000x8 spent in
// messages.DecodeBatch alone.
func BenchmarkDecode1000x8(b *testing.B) {
	for _, perPhase := range []int{100, 1000} {
		b.Run("latencies="+strconv.Itoa(perPhase), func(b *testing.B) {
			fleet := encodedFleet(b, 1000, perPhase)
			b.ReportAllocs()
			for b.Loop() {
				for _, data := range fleet {
					if _, err := messages.DecodeBatch(data); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkResult1000x8 is the share of BenchmarkPool1000x8 spent deriving
// the result from a full pool.
func BenchmarkResult1000x8(b *testing.B) {
	for _, perPhase := range []int{100, 1000} {
		b.Run("latencies="+strconv.Itoa(perPhase), func(b *testing.B) {
			p := fullPool(b, encodedFleet(b, 1000, perPhase))
			b.ReportAllocs()
			for b.Loop() {
				_ = p.Result()
			}
		})
	}
}
