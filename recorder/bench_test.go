package recorder_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// Benchmarks of the recorder, the producer's per-command bookkeeping:
//
//	go test ./recorder -run '^$' -bench . -benchtime 1s -count 3

// latencies are n log-normal durations around 2 ms (a spread as wide as a
// real server's), drawn once so that generating them is not measured.
func latencies(n int) []time.Duration {
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(2e6 * math.Exp(0.8*rng.NormFloat64()))
	}
	return out
}

// BenchmarkRecord is one successful command: its response and service
// times, each into a reservoir and a sketch. ns/value is per latency value.
func BenchmarkRecord(b *testing.B) {
	ds := latencies(4096)
	r := recorder.New("r1", 1, "p1", messages.StepInfo{}, &recorder.Options{Seed: 1})
	i := 0
	for b.Loop() {
		d := ds[i&4095]
		r.Record(messages.Fetch, d, d/2)
		i++
	}
	reportPerValue(b, 2)
}

// BenchmarkRecordParallel is Record from every P at once, as a producer's
// sessions record: the recorder's mutex is shared.
func BenchmarkRecordParallel(b *testing.B) {
	ds := latencies(4096)
	r := recorder.New("r1", 1, "p1", messages.StepInfo{}, &recorder.Options{Seed: 1})
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			d := ds[i&4095]
			r.Record(messages.Phase(i%messages.NumPhases), d, d/2)
			i++
		}
	})
	reportPerValue(b, 2)
}

// BenchmarkFail is one failed command whose message repeats, as under an
// outage: the kind comes from the cache, not from Normalize's regexps.
func BenchmarkFail(b *testing.B) {
	r := recorder.New("r1", 1, "p1", messages.StepInfo{}, &recorder.Options{Seed: 1, Secrets: []string{"s3cret"}})
	errs := make([]error, 16)
	for i := range errs {
		errs[i] = errors.New("read tcp 127.0.0.1:" + strconv.Itoa(40000+i) + "->127.0.0.1:143: read: connection reset by peer")
	}
	i := 0
	for b.Loop() {
		r.Fail(messages.Fetch, errs[i&15])
		i++
	}
}

// BenchmarkNormalize is the uncached path: a message never seen before.
func BenchmarkNormalize(b *testing.B) {
	msg := "A1234 NO [AUTHENTICATIONFAILED] Authentication failed for user42@example.org from 10.1.2.3:5678"
	for b.Loop() {
		_ = recorder.Normalize(msg)
	}
}

// BenchmarkCut is one batch: every phase holding perPhase successful commands
// (perPhase=40 is a 1 s flush at 300 commands/s; 5000 overflows the 1024
// reservoir). Only Cut is timed, not the recording before it.
func BenchmarkCut(b *testing.B) {
	for _, perPhase := range []int{40, 1000, 5000} {
		b.Run("perPhase="+strconv.Itoa(perPhase), func(b *testing.B) {
			ds := latencies(perPhase)
			r := recorder.New("r1", 1, "p1", messages.StepInfo{}, &recorder.Options{Seed: 1})
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				fill(r, ds)
				b.StartTimer()
				if batch := r.Cut(0, time.Second, false, messages.Health{}); len(batch.Phases) != messages.NumPhases {
					b.Fatalf("Cut() = %d phases, want %d", len(batch.Phases), messages.NumPhases)
				}
			}
		})
	}
}

func fill(r *recorder.Recorder, ds []time.Duration) {
	for _, p := range messages.Phases() {
		for _, d := range ds {
			r.Record(p, d, d/2)
			r.Scheduled(true)
		}
	}
	r.Lag(100 * time.Microsecond)
}

// reportPerValue reports the time per latency value when each operation
// records perOp of them.
func reportPerValue(b *testing.B, perOp int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(perOp), "ns/value")
}
