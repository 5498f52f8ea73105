package aggregator

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
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

// TestThinning caps the pooled sample: the result stays reproducible, the
// sample percentiles stay close, the reservoirs' own intervals widen, and
// the sketch figures, intervals included, do not move.
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
	if got.Percentiles != full.Percentiles || got.CI != full.CI {
		t.Errorf("thinned Pool.Result() percentiles = %+v, intervals %+v; want the sketch's %+v, %+v", got.Percentiles, got.CI, full.Percentiles, full.CI)
	}
	if relErr(got.Sample.P50, full.Sample.P50) > 0.05 || relErr(got.Sample.P90, full.Sample.P90) > 0.1 {
		t.Errorf("thinned sample p50/p90 = %v/%v ms, want within 5%%/10%% of %v/%v ms", got.Sample.P50, got.Sample.P90, full.Sample.P50, full.Sample.P90)
	}
	strata := poolOf(t, f.batches).phases[messages.Fetch].strata
	width := func(maxSample int) float64 {
		iv := newWeighted(strata, maxSample).sampleInterval(0.9, 1.96, span{max: 1e9})
		return iv[1] - iv[0]
	}
	if w, fw := width(2000), width(1<<18); w <= fw {
		t.Errorf("thinned weighted.sampleInterval(0.9) width = %v ms, want wider than %v ms", w, fw)
	}
}

// exactRank is the order statistic DDSketch reads for q among every value,
// rounded to whole µs as the reservoirs are, in ms.
func exactRank(values [][]float64, q float64) float64 {
	var all []float64
	for _, vs := range values {
		for _, v := range vs {
			all = append(all, math.Round(v))
		}
	}
	slices.Sort(all)
	return all[int(q*float64(len(all)-1))] / 1000
}

// TestCompleteReservoirs: when every reservoir kept every latency, the sample
// is the population. Its percentiles are the sketch's order statistics, its
// own intervals hold the sketch's values, and nothing disagrees.
func TestCompleteReservoirs(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	tests := []struct {
		name   string
		values [][]float64
	}{
		{name: "5 values", values: [][]float64{latencies(rng, 5, 2000)}},
		{name: "69 values, one slow", values: [][]float64{demoTail()}},
		{name: "1000 values, 20 strata", values: split(latencies(rng, 1000, 2000), 20)},
		{name: "unequal strata", values: [][]float64{latencies(rng, 900, 1000), latencies(rng, 3, 90_000), latencies(rng, 97, 4000)}},
		{name: "zeros and sub-µs", values: [][]float64{{0, 0, 0, 0.3, 0.6, 1, 2, 2, 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := poolOf(t, recorded(t, messages.MaxReservoir, tt.values...))
			pr := p.Result().Phases["fetch"]
			if len(pr.Disagree) != 0 {
				t.Errorf("Pool.Result() disagree = %v, want none (complete reservoirs)", pr.Disagree)
			}
			w := newWeighted(p.phases[messages.Fetch].strata, 1<<18)
			sk := [4]float64{pr.P50, pr.P90, pr.P99, pr.P999}
			for i, sample := range [4]float64{pr.Sample.P50, pr.Sample.P90, pr.Sample.P99, pr.Sample.P999} {
				if want := exactRank(tt.values, quantiles[i]); sample != want {
					t.Errorf("Pool.Result() sample %s = %v ms, want %v ms (the order statistic the sketch reads)", percentileNames[i], sample, want)
				}
				iv := w.sampleInterval(quantiles[i], 1.96, span{})
				if slices.Contains(pr.Unresolved, percentileNames[i]) { // reads as the max (resolved.go)
					if sk[i] != pr.Max {
						t.Errorf("Pool.Result() unresolved %s = %v ms, want the max %v ms", percentileNames[i], sk[i], pr.Max)
					}
					continue
				}
				if sk[i] < iv[0] || sk[i] > iv[1] || iv[1]-iv[0] > 2*messages.SketchAccuracy*sample+0.002+1e-9 {
					t.Errorf("weighted.sampleInterval(%v) = %v, want the order statistic %v ms ± 0.5%% and 1 µs, holding the sketch's %v ms", quantiles[i], iv, sample, sk[i])
				}
			}
		})
	}
}

// TestSampledIntervals: reservoirs smaller than the counts. Each of their
// own intervals spans at least the order statistics on either side of the
// estimate, runs to the largest latency observed when the sample cannot
// bound the quantile from above, and holds the sketch's value.
func TestSampledIntervals(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	tests := []struct {
		name      string
		reservoir int
		values    [][]float64
		openAbove []string // percentiles the sample cannot bound from above
	}{
		{name: "5 of 34", reservoir: 5, values: [][]float64{latencies(rng, 34, 2000)}, openAbove: []string{"p90", "p99", "p999"}},
		{name: "34 of 69", reservoir: 34, values: [][]float64{demoTail()}, openAbove: []string{"p99", "p999"}},
		{name: "69 of 1000", reservoir: 69, values: [][]float64{latencies(rng, 1000, 2000)}, openAbove: []string{"p99", "p999"}},
		{name: "69 of 1000, in 10 strata", reservoir: 7, values: split(latencies(rng, 1000, 2000), 10), openAbove: []string{"p99", "p999"}},
		{name: "512 of 5000, in 4 strata", reservoir: 128, values: split(latencies(rng, 5000, 2000), 4), openAbove: []string{"p999"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := poolOf(t, recorded(t, tt.reservoir, tt.values...))
			pr := p.Result().Phases["fetch"]
			w := newWeighted(p.phases[messages.Fetch].strata, p.opts.maxSample())
			sk := [4]float64{pr.P50, pr.P90, pr.P99, pr.P999}
			for i, q := range quantiles {
				iv := w.sampleInterval(q, 1.96, span{max: 1000 * pr.Max})
				j := w.rank(q)
				below, above := w.ms(max(j-1, 0)), w.ms(min(j+1, len(w.keys)-1))
				if iv[0] > below || iv[1] < above {
					t.Errorf("weighted.sampleInterval(%v) = %v, want it to span the neighbouring order statistics %v..%v ms", q, iv, below, above)
				}
				if slices.Contains(tt.openAbove, percentileNames[i]) && iv[1] < pr.Max {
					t.Errorf("weighted.sampleInterval(%v) = %v, want it to run to the largest latency, %v ms", q, iv, pr.Max)
				}
				if sk[i] < iv[0] || sk[i] > iv[1] {
					t.Errorf("weighted.sampleInterval(%v) = %v, want it to hold the sketch's %v ms", q, iv, sk[i])
				}
			}
			if len(pr.Disagree) != 0 {
				t.Errorf("Pool.Result() disagree = %v, want none", pr.Disagree)
			}
		})
	}
}

// TestDisagreeFires pools reservoirs and sketches that do not describe the
// same latencies: the sketch saw every latency scaled by factor.
func TestDisagreeFires(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	all := latencies(rng, 4000, 2000)
	tests := []struct {
		name      string
		reservoir int
		factor    float64
		want      []string
	}{
		{name: "complete, sketch 2× slower", reservoir: 1024, factor: 2, want: []string{"p50", "p90", "p99", "p999"}},
		{name: "complete, sketch 1% faster", reservoir: 1024, factor: 0.99, want: []string{"p50", "p90", "p99", "p999"}},
		{name: "complete, same latencies", reservoir: 1024, factor: 1},
		// Sampled, the reservoirs' p99 and p99.9 intervals run to the largest
		// latency (the sketch's): a sketch too slow in the tail alone goes
		// unnoticed.
		{name: "sampled, sketch 2× slower", reservoir: 64, factor: 2, want: []string{"p50", "p90"}},
		{name: "sampled, sketch 2× faster", reservoir: 64, factor: 0.5, want: []string{"p50", "p90", "p99", "p999"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			batches := recorded(t, tt.reservoir, split(all, 4)...)
			scaled := make([]float64, len(all))
			for i, v := range all {
				scaled[i] = v * tt.factor
			}
			for i, b := range recorded(t, tt.reservoir, split(scaled, 4)...) {
				batches[i].PhaseStats(messages.Fetch).Response.Sketch = b.PhaseStats(messages.Fetch).Response.Sketch
			}
			pr := poolOf(t, batches).Result().Phases["fetch"]
			if !slices.Equal(pr.Disagree, tt.want) {
				t.Errorf("Pool.Result() disagree = %v, want %v (sketch %+v, sample %+v)", pr.Disagree, tt.want, pr.Percentiles, pr.Sample)
			}
		})
	}
}

// TestSampleQuantileDefinition checks the sample percentiles against
// DDSketch's own definition on one complete stratum of n values: the
// ⌊q·(n−1)⌋-th order statistic from 0.
func TestSampleQuantileDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	for _, n := range []int{1, 2, 5, 34, 69, 100, 1001} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			values := make([]uint32, n)
			for i := range values {
				values[i] = 1 + rng.Uint32N(1_000_000)
			}
			w := newWeighted([]stratum{{key: batchKey{"a", 0}, count: uint64(n), values: values}}, 1<<30)
			sk := messages.NewSketch()
			for _, v := range values {
				_ = sk.Add(float64(v))
			}
			sorted := slices.Sorted(slices.Values(values))
			for _, q := range append(quantiles[:], 0, 1) {
				got := w.micros(w.rank(q))
				if want := sorted[int(q*float64(n-1))]; got != want {
					t.Errorf("weighted.rank(%v) value = %d µs, want %d µs", q, got, want)
				}
				if v, _ := sk.GetValueAtQuantile(q); math.Abs(v-float64(got)) > messages.SketchAccuracy*float64(got) {
					t.Errorf("q%v: sample %d µs, sketch %v µs: more than 0.5%% apart", q, got, v)
				}
			}
		})
	}
}

// TestWilson checks the bounds against their definition: at each, the
// continuity-corrected score statistic |p − p₀| − 1/(2n) equals
// z·√(p₀(1−p₀)/n).
func TestWilson(t *testing.T) {
	const z = 1.96
	for _, c := range []struct{ p, n float64 }{{0.5, 100}, {0.9, 10.94}, {0.99, 69}, {0.99, 1000}, {0.999, 5000}, {0.5, 3}} {
		lo, hi := wilson(c.p, c.n, z)
		if !(lo < c.p && c.p < hi) {
			t.Errorf("wilson(%v, %v) = %v, %v; want bounds on either side of p", c.p, c.n, lo, hi)
		}
		for _, b := range []struct {
			name  string
			p0    float64
			score float64
		}{{"low", lo, c.p - lo}, {"high", hi, hi - c.p}} {
			if b.p0 <= 0 || b.p0 >= 1 {
				continue // outside (0, 1): the bound is open
			}
			want := z * math.Sqrt(b.p0*(1-b.p0)/c.n)
			if got := b.score - 1/(2*c.n); math.Abs(got-want) > 1e-9 {
				t.Errorf("wilson(%v, %v) %s bound %v: score %v, want %v", c.p, c.n, b.name, b.p0, got, want)
			}
		}
	}
	if lo, hi := wilson(0.9, math.Inf(1), z); lo != 0.9 || hi != 0.9 {
		t.Errorf("wilson(0.9, +Inf) = %v, %v; want 0.9, 0.9", lo, hi)
	}
}
