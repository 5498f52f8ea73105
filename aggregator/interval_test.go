package aggregator

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// recorded cuts one final fetch batch per producer from real recorders, so
// that every sketch and reservoir hold the same latencies, as in a run.
// values are per producer, µs.
func recorded(t *testing.T, reservoir int, values ...[]float64) []*messages.SampleBatch {
	t.Helper()
	info := messages.StepInfo{FleetRate: 100, Rate: 100, Producers: len(values), Duration: int64(time.Second)}
	var out []*messages.SampleBatch
	for i, vs := range values {
		rec := recorder.New("r1", 1, "p"+pad2(i), info, &recorder.Options{Reservoir: reservoir, Seed: uint64(i + 1)})
		for _, us := range vs {
			d := time.Duration(us * float64(time.Microsecond))
			rec.Record(messages.Fetch, d, d/2)
			rec.Scheduled(true)
		}
		out = append(out, rec.Cut(0, time.Second, true, messages.Health{}))
	}
	return out
}

// latencies draws n lognormal latencies around median µs, with a few slow ones.
func latencies(rng *rand.Rand, n int, median float64) []float64 {
	vs := make([]float64, n)
	for i := range vs {
		vs[i] = math.Round(median*math.Exp(0.6*rng.NormFloat64())) + rng.Float64() // sub-µs part: the sketch keeps it
		if rng.IntN(20) == 0 {
			vs[i] *= 5
		}
	}
	return vs
}

// demoTail is 69 latencies of about 30 ms and one of 191 ms, as in the demo
// step whose P99 interval was [191, 191] ms beside a sketch P99 of 40.7 ms.
func demoTail() []float64 {
	vs := make([]float64, 69)
	for i := range vs {
		vs[i] = 25_000 + 230*float64(i)
	}
	vs[68] = 191_000
	return vs
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

func split(vs []float64, parts int) [][]float64 {
	var out [][]float64
	for i := range parts {
		out = append(out, vs[i*len(vs)/parts:(i+1)*len(vs)/parts])
	}
	return out
}

// TestCompleteReservoirs: when every reservoir kept every latency, the sample
// is the population. Its percentiles are the sketch's order statistics, the
// intervals hold the sketch's values, and nothing disagrees.
func TestCompleteReservoirs(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	tests := []struct {
		name   string
		values [][]float64
	}{
		{name: "5 values", values: [][]float64{latencies(rng, 5, 2000)}},
		{name: "34 values", values: [][]float64{latencies(rng, 34, 2000)}},
		{name: "69 values, one slow", values: [][]float64{demoTail()}},
		{name: "1000 values, one stratum", values: [][]float64{latencies(rng, 1000, 2000)}},
		{name: "1000 values, 20 strata", values: split(latencies(rng, 1000, 2000), 20)},
		{name: "20 unequal strata", values: [][]float64{latencies(rng, 900, 1000), latencies(rng, 3, 90_000), latencies(rng, 97, 4000)}},
		{name: "zeros and sub-µs", values: [][]float64{{0, 0, 0.3, 0.6, 1, 2, 2, 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr := poolOf(t, recorded(t, messages.MaxReservoir, tt.values...)).Result().Phases["fetch"]
			if len(pr.Disagree) != 0 {
				t.Errorf("Pool.Result() disagree = %v, want none (complete reservoirs)", pr.Disagree)
			}
			for _, c := range percentileCases(pr) {
				if want := exactRank(tt.values, c.q); c.sample != want {
					t.Errorf("Pool.Result() sample %s = %v ms, want %v ms (the order statistic the sketch reads)", c.name, c.sample, want)
				}
				if c.sketch < c.iv[0] || c.sketch > c.iv[1] {
					t.Errorf("Pool.Result() %s interval = %v, want it to hold the sketch's %v ms", c.name, c.iv, c.sketch)
				}
				if w := c.iv[1] - c.iv[0]; w > 2*messages.SketchAccuracy*c.sample+0.002+1e-9 {
					t.Errorf("Pool.Result() %s interval = %v, %v ms wide; want the order statistic %v ms ± 0.5%% and 1 µs", c.name, c.iv, w, c.sample)
				}
			}
		})
	}
}

type percentileCase struct {
	name           string
	q              float64
	sketch, sample float64
	iv             messages.Interval
}

func percentileCases(pr messages.PhaseResult) []percentileCase {
	return []percentileCase{
		{"p50", 0.5, pr.P50, pr.Sample.P50, pr.CI.P50},
		{"p90", 0.9, pr.P90, pr.Sample.P90, pr.CI.P90},
		{"p99", 0.99, pr.P99, pr.Sample.P99, pr.CI.P99},
		{"p999", 0.999, pr.P999, pr.Sample.P999, pr.CI.P999},
	}
}

// TestSampledIntervals: reservoirs smaller than the counts. Each interval
// spans at least the order statistics on either side of the estimate, runs
// to the largest latency observed when the sample cannot bound the quantile
// from above, and holds the sketch's value, which agrees with the sample.
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
			for _, c := range percentileCases(pr) {
				j := w.rank(c.q)
				below, above := w.ms(max(j-1, 0)), w.ms(min(j+1, len(w.keys)-1))
				if c.iv[0] > below || c.iv[1] < above {
					t.Errorf("Pool.Result() %s interval = %v, want it to span the neighbouring order statistics %v..%v ms", c.name, c.iv, below, above)
				}
				if open := slices.Contains(tt.openAbove, c.name); open && c.iv[1] < pr.Max {
					t.Errorf("Pool.Result() %s interval = %v, want it to run to the largest latency, %v ms", c.name, c.iv, pr.Max)
				}
				if c.sketch < c.iv[0] || c.sketch > c.iv[1] {
					t.Errorf("Pool.Result() %s interval = %v, want it to hold the sketch's %v ms", c.name, c.iv, c.sketch)
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
		// Sampled, the p99 and p99.9 intervals run to the largest latency
		// (the sketch's): a sketch too slow in the tail alone goes unnoticed.
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
				t.Errorf("Pool.Result() disagree = %v, want %v (sketch %+v, intervals %+v)", pr.Disagree, tt.want, pr.Percentiles, pr.CI)
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

// TestIntervalValues pins the intervals of two small strata.
func TestIntervalValues(t *testing.T) {
	iv := func(lo, hi float64) messages.Interval { // µs → the widened interval, ms
		return messages.Interval{(lo*0.995 - 1) / 1000, (hi*1.005 + 1) / 1000}
	}
	tests := []struct {
		name   string
		strata []stratum
		want   messages.Intervals
	}{
		{
			name: "complete: the order statistics",
			strata: []stratum{
				{key: batchKey{"a", 0}, count: 4, values: []uint32{1000, 2000, 3000, 4000}},
				{key: batchKey{"b", 0}, count: 2, values: []uint32{5000, 6000}},
			},
			// N = 6: ranks 2.5, 4.5, 4.95 and 4.995 read the 3rd and the 5th value.
			want: messages.Intervals{P50: iv(3000, 3000), P90: iv(5000, 5000), P99: iv(5000, 5000), P999: iv(5000, 5000)},
		},
		{
			name: "one sampled stratum: open above, never a single value",
			strata: []stratum{
				{key: batchKey{"a", 0}, count: 8, values: []uint32{1000, 2000, 3000, 4000}},
				{key: batchKey{"b", 0}, count: 2, values: []uint32{5000, 6000}},
			},
			// N = 10, each value of a weighs 2. At the median, Korn and
			// Graubard's size is 10.5 (P = 0.4 and V = 0.0229 at 2000 µs);
			// beyond it only b has values, which has no sampling error, so
			// the size is Kish's, 10.94. The bounds at the sample's ends are
			// open: the smallest and largest latencies, 900 and 9000 µs.
			want: messages.Intervals{P50: iv(900, 4000), P90: iv(3000, 9000), P99: iv(3000, 9000), P999: iv(4000, 9000)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWeighted(tt.strata, 1<<30)
			got := w.intervals(1.96, span{min: 900, max: 9000})
			for i, pair := range [4][2]messages.Interval{{got.P50, tt.want.P50}, {got.P90, tt.want.P90}, {got.P99, tt.want.P99}, {got.P999, tt.want.P999}} {
				if math.Abs(pair[0][0]-pair[1][0]) > 1e-9 || math.Abs(pair[0][1]-pair[1][1]) > 1e-9 {
					t.Errorf("weighted.intervals() %s = %v, want %v", percentileNames[i], pair[0], pair[1])
				}
			}
		})
	}
}

func TestDisagreements(t *testing.T) {
	ci := messages.Intervals{P50: messages.Interval{1, 2}, P90: messages.Interval{3, 4}, P99: messages.Interval{5, 6}, P999: messages.Interval{7, 8}}
	tests := []struct {
		name string
		sk   messages.Percentiles
		want []string
	}{
		{name: "inside", sk: messages.Percentiles{P50: 1.5, P90: 3.5, P99: 5.5, P999: 7.5}},
		{name: "on the bounds", sk: messages.Percentiles{P50: 1, P90: 4, P99: 5, P999: 8}},
		{name: "outside", sk: messages.Percentiles{P50: 0.99, P90: 3.5, P99: 6.01, P999: 7.5}, want: []string{"p50", "p99"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := disagreements(tt.sk, ci); !slices.Equal(got, tt.want) {
				t.Errorf("disagreements(%+v) = %v, want %v", tt.sk, got, tt.want)
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
