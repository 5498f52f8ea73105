package messages_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
)

// Benchmarks of the batch codec, with batches shaped as a producer sends
// them (see BENCHMARKS.md):
//
//	go test ./messages -run '^$' -bench Batch -benchtime 1s -count 3
//
// B/phase is the encoded size per phase entry: what one phase of one
// producer costs on the wire per batch.

// benchBatches are a producer's batches at 300 commands/s with the default
// mix (messages.DefaultMix: 360 weight units, a LOGOUT, hence a dial and a
// LOGIN, every 18 commands): a mid-step batch after a 1 s flush, and the
// batch of a whole 30 s step, whose reservoirs are full (1024 values).
var benchBatches = []struct {
	name    string
	seconds int
}{
	{"flush-1s", 1},
	{"step-30s", 30},
}

// producerBatch is a batch of seconds at 300 commands/s, as the recorder cuts
// it with its default reservoir of 1024: every phase with its response and
// service samples, the dial phase with TLS times, a few login errors.
func producerBatch(tb testing.TB, seconds int) *messages.SampleBatch {
	tb.Helper()
	perSecond := map[messages.Phase]float64{}
	for name, w := range messages.DefaultMix() {
		p, _ := messages.ParsePhase(name)
		perSecond[p] = 300 * w / 360
	}
	perSecond[messages.Dial] = perSecond[messages.Logout]
	perSecond[messages.Login] = perSecond[messages.Logout]
	rng := rand.New(rand.NewPCG(3, 4))
	b := &messages.SampleBatch{Run: "r1", Step: 3, Producer: "loadhost-17-4242", Seq: 5,
		Sent: time.Unix(1_750_000_000, 0), From: 4e9, To: 4e9 + int64(seconds)*1e9,
		Info:   messages.StepInfo{FleetRate: 3000, Rate: 300, Producers: 10, Warmup: 3e9, Duration: 30e9},
		Health: messages.Health{LagP99: 310, LagMax: 2200, CPU: 0.11, Sessions: 32}}
	for _, p := range messages.Phases() {
		n := int(perSecond[p] * float64(seconds))
		mean := 300 * float64(p+1) // µs
		ps := messages.PhaseStats{Phase: p, Attempted: uint64(n), Succeeded: uint64(n),
			Response: sampleOf(tb, rng, n, 1024, mean*1.5), Service: sampleOf(tb, rng, n, 1024, mean)}
		switch p {
		case messages.Dial:
			ps.TLS = sampleOf(tb, rng, n, 1024, mean/2)
		case messages.Login:
			ps.Errors = messages.ErrorList{{Kind: "imap: NO [AUTHENTICATIONFAILED] Authentication failed.", Count: 1,
				Example: "imap: NO [AUTHENTICATIONFAILED] Authentication failed."}}
			ps.Attempted++
		}
		if p.Scheduled() {
			b.Scheduled += ps.Attempted
			b.Completed += ps.Succeeded
		}
		b.Phases = append(b.Phases, ps)
	}
	return b
}

func BenchmarkEncodeBatch(b *testing.B) {
	for _, bb := range benchBatches {
		b.Run(bb.name, func(b *testing.B) {
			batch := producerBatch(b, bb.seconds)
			var size int
			b.ReportAllocs()
			for b.Loop() {
				data, err := messages.EncodeBatch(batch)
				if err != nil {
					b.Fatalf("EncodeBatch() error = %v", err)
				}
				size = len(data)
			}
			reportSize(b, size, len(batch.Phases))
		})
	}
}

func BenchmarkDecodeBatch(b *testing.B) {
	for _, bb := range benchBatches {
		b.Run(bb.name, func(b *testing.B) {
			data, err := messages.EncodeBatch(producerBatch(b, bb.seconds))
			if err != nil {
				b.Fatalf("EncodeBatch() error = %v", err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := messages.DecodeBatch(data); err != nil {
					b.Fatalf("DecodeBatch() error = %v", err)
				}
			}
			reportSize(b, len(data), messages.NumPhases)
		})
	}
}

// reportSize reports the encoded size of a batch and per phase entry.
func reportSize(b *testing.B, size, phases int) {
	b.ReportMetric(float64(size), "B/batch")
	b.ReportMetric(float64(size)/float64(phases), "B/phase")
}
