package aggregator

import (
	"math"
	"math/rand/v2"
	"testing"
)

// sampleOf pools draws of gen as strata of 500 values each standing for
// 2 000 latencies, as reservoirs would.
func sampleOf(seed uint64, strata int, gen func(*rand.Rand) float64) *weighted {
	rng := rand.New(rand.NewPCG(seed, 1))
	var ss []stratum
	for i := range strata {
		vals := make([]uint32, 500)
		for j := range vals {
			vals[j] = uint32(math.Min(math.Max(math.Round(gen(rng)), 0), 4e9))
		}
		ss = append(ss, stratum{key: batchKey{producer: pad2(i)}, count: 2000, values: vals})
	}
	return newWeighted(ss, 1<<30)
}

func lognormal(median, sigma float64) func(*rand.Rand) float64 {
	return func(r *rand.Rand) float64 { return median * math.Exp(sigma*r.NormFloat64()) }
}

func mix(p float64, a, b func(*rand.Rand) float64) func(*rand.Rand) float64 {
	return func(r *rand.Rand) float64 {
		if r.Float64() < p {
			return a(r)
		}
		return b(r)
	}
}

func pareto(xm, alpha float64) func(*rand.Rand) float64 {
	return func(r *rand.Rand) float64 { return xm / math.Pow(1-r.Float64(), 1/alpha) }
}

func TestBimodality(t *testing.T) {
	hit, miss := lognormal(200, 0.25), lognormal(60000, 0.15)
	tests := []struct {
		name     string
		gen      func(*rand.Rand) float64
		bimodal  bool
		low      float64 // ms, expected modes and low share when bimodal
		high     float64
		lowShare float64
	}{
		{name: "login 70% cache hits", gen: mix(0.7, hit, miss), bimodal: true, low: 0.2, high: 60, lowShare: 0.7},
		{name: "login 10% cache hits", gen: mix(0.1, hit, miss), bimodal: true, low: 0.2, high: 60, lowShare: 0.1},
		{name: "login 2% misses", gen: mix(0.98, hit, miss)},
		{name: "two modes 3× apart", gen: mix(0.5, lognormal(1000, 0.1), lognormal(3000, 0.1)), bimodal: true, low: 1, high: 3, lowShare: 0.5},
		{name: "overlapping modes 1.5× apart", gen: mix(0.5, lognormal(1000, 0.3), lognormal(1500, 0.3))},
		{name: "lognormal narrow", gen: lognormal(2000, 0.3)},
		{name: "lognormal wide", gen: lognormal(2000, 1.5)},
		{name: "lognormal with Pareto tail", gen: mix(0.9, lognormal(2000, 0.4), pareto(5000, 1.5))},
		{name: "Pareto", gen: pareto(1000, 1.2)},
		{name: "exponential", gen: func(r *rand.Rand) float64 { return 3000 * r.ExpFloat64() }},
		{name: "flat over three decades", gen: func(r *rand.Rand) float64 { return 100 * math.Pow(1000, r.Float64()) }},
		{name: "constant", gen: func(*rand.Rand) float64 { return 1234 }},
		{name: "sub-microsecond", gen: func(r *rand.Rand) float64 { return r.Float64() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for seed := range uint64(3) {
				b := sampleOf(seed, 20, tt.gen).bimodality()
				if (b != nil) != tt.bimodal {
					t.Fatalf("seed %d: bimodality() = %+v, want bimodal %v", seed, b, tt.bimodal)
				}
				if b == nil {
					continue
				}
				if relErr(b.LowMode, tt.low) > 0.1 || relErr(b.HighMode, tt.high) > 0.1 || math.Abs(b.LowShare-tt.lowShare) > 0.03 {
					t.Errorf("seed %d: bimodality() = %+v, want modes ≈ %v ms / %v ms, low share ≈ %v", seed, b, tt.low, tt.high, tt.lowShare)
				}
				if b.Separation <= ashmanMin || math.Abs(b.LowShare+b.HighShare-1) > 1e-12 {
					t.Errorf("seed %d: bimodality() separation %v, shares %v + %v; want > %v, summing to 1", seed, b.Separation, b.LowShare, b.HighShare, ashmanMin)
				}
			}
		})
	}
}

// TestBimodalitySmallSamples checks the verdict is not noise: with only 100
// values, unimodal shapes are almost never called bimodal and clear
// mixtures almost always are.
func TestBimodalitySmallSamples(t *testing.T) {
	hit, miss := lognormal(200, 0.25), lognormal(60000, 0.15)
	tests := []struct {
		name     string
		gen      func(*rand.Rand) float64
		min, max int // bimodal verdicts out of 100
	}{
		{name: "login 10% cache hits", gen: mix(0.1, hit, miss), min: 90, max: 100},
		{name: "login 70% cache hits", gen: mix(0.7, hit, miss), min: 98, max: 100},
		{name: "lognormal wide", gen: lognormal(2000, 1.5), max: 2},
		{name: "flat over three decades", gen: func(r *rand.Rand) float64 { return 100 * math.Pow(1000, r.Float64()) }, max: 2},
		{name: "lognormal with Pareto tail", gen: mix(0.9, lognormal(2000, 0.4), pareto(5000, 1.5)), max: 2},
		{name: "exponential", gen: func(r *rand.Rand) float64 { return 3000 * r.ExpFloat64() }, max: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := 0
			for seed := range uint64(100) {
				rng := rand.New(rand.NewPCG(seed, 2))
				vals := make([]uint32, 100)
				for j := range vals {
					vals[j] = uint32(math.Round(tt.gen(rng)))
				}
				if newWeighted([]stratum{{count: 100, values: vals}}, 1<<30).bimodality() != nil {
					n++
				}
			}
			if n < tt.min || n > tt.max {
				t.Errorf("bimodality() called %d of 100 samples of 100 values bimodal, want %d–%d", n, tt.min, tt.max)
			}
		})
	}
}
