package producer

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	tests := []struct {
		name    string
		attempt int
		u       float64
		want    time.Duration
	}{
		{"no jitter draws zero", 0, 0, 0},
		{"first retry, middle", 0, 0.5, 25 * time.Millisecond},
		{"second retry doubles", 1, 0.5, 50 * time.Millisecond},
		{"fourth retry", 3, 0.5, 200 * time.Millisecond},
		{"capped", 7, 0.5, 2500 * time.Millisecond},
		{"far past the cap", 1000, 0.5, 2500 * time.Millisecond},
		{"top of the cap", 40, 0.999, 4995 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := backoff(tt.attempt, backoffBase, backoffCap, tt.u); got != tt.want {
				t.Errorf("backoff(%d, %v, %v, %v) = %v, want %v", tt.attempt, backoffBase, backoffCap, tt.u, got, tt.want)
			}
		})
	}
}

// TestBackoffJitterSpread checks that full jitter spreads retries uniformly
// over [0, ceiling): every tenth of the range gets about a tenth of them.
func TestBackoffJitterSpread(t *testing.T) {
	for _, attempt := range []int{0, 2, 10} {
		ceiling := min(backoffBase<<attempt, backoffCap)
		rng := rand.New(rand.NewPCG(1, uint64(attempt)))
		const n = 10_000
		var tenths [10]int
		for range n {
			d := backoff(attempt, backoffBase, backoffCap, rng.Float64())
			if d < 0 || d >= ceiling {
				t.Fatalf("backoff(%d) = %v, want in [0, %v)", attempt, d, ceiling)
			}
			tenths[int(10*d/ceiling)]++
		}
		for i, c := range tenths {
			if c < n/10*8/10 || c > n/10*12/10 {
				t.Errorf("attempt %d: %d of %d retries in tenth %d of [0, %v), want %d ± 20%%", attempt, c, n, i, ceiling, n/10)
			}
		}
	}
}
