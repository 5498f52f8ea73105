package aggregator

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/imapload/imapload/messages"
)

func TestSortKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	tests := []struct {
		name string
		n    int
		max  uint32 // values below it
	}{
		{name: "small", n: 100, max: 1 << 20},
		{name: "large, values under 65536 µs", n: 20_000, max: 1 << 16},
		{name: "large, wide values", n: 20_000, max: math.MaxUint32},
		{name: "large, one value", n: 10_000, max: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys := make([]uint64, tt.n)
			for i := range keys {
				keys[i] = uint64(rng.Uint32N(tt.max))<<32 | uint64(i/7) // stratum ids ascending, as built
			}
			want := slices.Clone(keys)
			slices.Sort(want)
			w := &weighted{keys: keys}
			w.sortKeys()
			if !slices.Equal(keys, want) {
				t.Errorf("sortKeys() of %d keys differs from slices.Sort", tt.n)
			}
		})
	}
}

// twoStrata: a producer that observed 100 latencies and kept 10 (1..10 µs,
// each standing for 10), and one that observed 10 and kept them all
// (101..110 µs). Concatenating the samples would put the median at 10 µs.
func twoStrata() *weighted {
	return newWeighted([]stratum{
		{key: batchKey{"a", 0}, count: 100, values: []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		{key: batchKey{"b", 0}, count: 10, values: []uint32{101, 102, 103, 104, 105, 106, 107, 108, 109, 110}},
	}, 1<<30)
}

func TestWeightedQuantile(t *testing.T) {
	w := twoStrata()
	tests := []struct {
		name string
		q    float64
		want uint32 // µs
	}{
		{name: "min", q: 0, want: 1},
		{name: "median", q: 0.5, want: 6},
		{name: "p90", q: 0.9, want: 10},
		{name: "p95", q: 0.95, want: 105},
		{name: "max", q: 1, want: 110},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := w.micros(w.index(tt.q)); got != tt.want {
				t.Errorf("weighted.index(%v) value = %d µs, want %d µs", tt.q, got, tt.want)
			}
		})
	}
}

func TestSpread(t *testing.T) {
	w := twoStrata()
	// At 5 µs: stratum a has F = 0.5, weight 100/110, k = 10, n = 100, so
	// (100/110)² · 0.25/10 · 90/99; stratum b kept everything: no error.
	// The pooled CDF there is 50/110. At 200 µs every F is 1.
	wantV := (100.0 / 110) * (100.0 / 110) * 0.25 / 10 * 90 / 99
	pa, va, pb, vb := w.spread(5, 200)
	if math.Abs(pa-50.0/110) > 1e-12 || math.Abs(va-wantV) > 1e-12 || pb != 1 || vb != 0 {
		t.Errorf("weighted.spread(5, 200) = %v, %v, %v, %v; want %v, %v, 1, 0", pa, va, pb, vb, 50.0/110, wantV)
	}
	// Twice the same point: the scratch is left clean between calls.
	if pa2, va2, _, _ := w.spread(5, 5); pa2 != pa || va2 != va {
		t.Errorf("weighted.spread(5, 5) = %v, %v; want %v, %v", pa2, va2, pa, va)
	}
}

// TestThinning caps the pooled sample: the result stays reproducible, the
// sample percentiles stay close, the intervals widen, and the sketch
// figures do not move.
func TestThinning(t *testing.T) {
	f := makeFleet(t, fleetSpec{producers: 20, batches: 2, reservoir: 512, minCount: 600, seed: 5,
		phases: []messages.Phase{messages.Fetch}})
	full := poolOf(t, f.batches).Result().Phases["fetch"]
	thinned := func(batches []*messages.SampleBatch) messages.PhaseResult {
		p := NewPool("r1", 1, &PoolOptions{MaxSample: 2000})
		for _, b := range batches {
			if _, err := p.Add(b); err != nil {
				t.Fatalf("Pool.Add() error = %v", err)
			}
		}
		return p.Result().Phases["fetch"]
	}
	got := thinned(f.batches)
	reversed := slices.Clone(f.batches)
	slices.Reverse(reversed)
	if again := thinned(reversed); !reflect.DeepEqual(again, got) {
		t.Errorf("thinned Pool.Result() depends on the order of Add: %+v, want %+v", again, got)
	}
	if got.Percentiles != full.Percentiles {
		t.Errorf("thinned Pool.Result() percentiles = %+v, want the sketch's %+v", got.Percentiles, full.Percentiles)
	}
	if relErr(got.Sample.P50, full.Sample.P50) > 0.05 || relErr(got.Sample.P90, full.Sample.P90) > 0.1 {
		t.Errorf("thinned sample p50/p90 = %v/%v ms, want within 5%%/10%% of %v/%v ms", got.Sample.P50, got.Sample.P90, full.Sample.P50, full.Sample.P90)
	}
	if w, fw := got.CI.P90[1]-got.CI.P90[0], full.CI.P90[1]-full.CI.P90[0]; w <= fw {
		t.Errorf("thinned p90 interval width = %v ms, want wider than %v ms", w, fw)
	}
}
