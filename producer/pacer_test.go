package producer

import (
	"math"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
)

func TestConstantAt(t *testing.T) {
	tests := []struct {
		name string
		i    uint64
		rate float64
		want time.Duration
	}{
		{"first command at the start", 0, 100, 0},
		{"second after one interval", 1, 100, 10 * time.Millisecond},
		{"hundredth after a second", 100, 100, time.Second},
		{"uneven interval", 1, 3, 333333333 * time.Nanosecond},
		{"slow rate", 3, 0.5, 6 * time.Second},
		{"fast rate", 1_000_000, 1e6, time.Second},
		{"huge index saturates", math.MaxUint64, 1e-3, math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := constantAt(tt.i, tt.rate); got != tt.want {
				t.Errorf("constantAt(%d, %v) = %v, want %v", tt.i, tt.rate, got, tt.want)
			}
		})
	}
}

func TestPacerConstant(t *testing.T) {
	tests := []struct {
		name string
		rate float64
		want []time.Duration
	}{
		{"300 per second", 300, []time.Duration{0, 3333333, 6666666, 10 * time.Millisecond, 13333333}},
		{"1 per second", 1, []time.Duration{0, time.Second, 2 * time.Second}},
		{"2.5 per second", 2.5, []time.Duration{0, 400 * time.Millisecond, 800 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPacer(tt.rate, messages.ArrivalConstant, 1)
			for i, want := range tt.want {
				if got := p.next(); got != want {
					t.Errorf("pacer.next() #%d = %v, want %v", i, got, want)
				}
			}
		})
	}
}

func TestConstantCount(t *testing.T) {
	tests := []struct {
		name     string
		rate     float64
		from, to time.Duration
		want     uint64
	}{
		{"one second at 300/s", 300, 0, time.Second, 300},
		{"window after warm-up", 300, time.Second, 4 * time.Second, 900},
		{"half-open at both ends", 10, 100 * time.Millisecond, 300 * time.Millisecond, 2},
		{"empty window", 10, time.Second, time.Second, 0},
		{"shorter than an interval", 1, 100 * time.Millisecond, 900 * time.Millisecond, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := constantCount(tt.rate, tt.from, tt.to); got != tt.want {
				t.Errorf("constantCount(%v, %v, %v) = %d, want %d", tt.rate, tt.from, tt.to, got, tt.want)
			}
		})
	}
}

// TestPacerPoisson checks the arrivals of a Poisson pacer: increasing, with
// exponential gaps of mean 1/rate (coefficient of variation 1), as many as
// expected in a span, and repeatable from the seed.
func TestPacerPoisson(t *testing.T) {
	tests := []struct {
		name string
		rate float64
		n    int
	}{
		{"300 per second", 300, 30000},
		{"5 per second", 5, 20000},
		{"20k per second", 20000, 40000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, again := newPacer(tt.rate, messages.ArrivalPoisson, 7), newPacer(tt.rate, messages.ArrivalPoisson, 7)
			var prev time.Duration
			var sum, sumSq float64
			for i := range tt.n {
				at := p.next()
				if at2 := again.next(); at2 != at {
					t.Fatalf("pacer.next() #%d = %v and %v with the same seed", i, at, at2)
				}
				if at < prev {
					t.Fatalf("pacer.next() #%d = %v, before the previous %v", i, at, prev)
				}
				gap := (at - prev).Seconds()
				sum, sumSq, prev = sum+gap, sumSq+gap*gap, at
			}
			mean := sum / float64(tt.n)
			sd := math.Sqrt(sumSq/float64(tt.n) - mean*mean)
			if want := 1 / tt.rate; math.Abs(mean-want) > 0.03*want {
				t.Errorf("mean gap = %v s, want %v s ± 3%%", mean, want)
			}
			if cv := sd / mean; math.Abs(cv-1) > 0.05 {
				t.Errorf("gap coefficient of variation = %.3f, want 1 ± 0.05 (exponential)", cv)
			}
		})
	}
}

func TestPacerPoissonSeedsDiffer(t *testing.T) {
	a, b := newPacer(100, messages.ArrivalPoisson, 1), newPacer(100, messages.ArrivalPoisson, 2)
	var as, bs [3]time.Duration
	for i := range as {
		as[i], bs[i] = a.next(), b.next()
	}
	if as == bs {
		t.Errorf("pacers seeded 1 and 2 gave the same first arrivals %v", as)
	}
}
