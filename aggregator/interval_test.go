package aggregator

import (
	"math"
	"math/rand/v2"
	"slices"
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

func split(vs []float64, parts int) [][]float64 {
	var out [][]float64
	for i := range parts {
		out = append(out, vs[i*len(vs)/parts:(i+1)*len(vs)/parts])
	}
	return out
}

// binomialPMF is P(B = k) for k = 0..n, B ~ Binomial(n, q), from log-gamma:
// another way than the one under test.
func binomialPMF(n int64, q float64) []float64 {
	p := make([]float64, n+1)
	lgN, _ := math.Lgamma(float64(n + 1))
	for k := range n + 1 {
		lgK, _ := math.Lgamma(float64(k + 1))
		lgR, _ := math.Lgamma(float64(n - k + 1))
		p[k] = math.Exp(lgN - lgK - lgR + float64(k)*math.Log(q) + float64(n-k)*math.Log1p(-q))
	}
	return p
}

// rankMass is P(l ≤ B < u) and its two tails, P(B < l) and P(B ≥ u), from
// cum[k] = P(B < k).
func rankMass(cum []float64, l, u int64) (mass, below, above float64) {
	n := int64(len(cum)) - 1
	below, upTo := cum[min(max(l, 0), n)], cum[min(max(u, 0), n)]
	return upTo - below, below, 1 - upTo
}

// binomialCum is P(B < k) for k = 0..n+1.
func binomialCum(n int64, q float64) []float64 {
	cum := []float64{0}
	for _, p := range binomialPMF(n, q) {
		cum = append(cum, cum[len(cum)-1]+p)
	}
	return cum
}

// TestRankIntervalBruteForce compares the ranks with every pair 1 ≤ l < u ≤ n:
// none shorter holds 95%, none as short is more central.
func TestRankIntervalBruteForce(t *testing.T) {
	for _, q := range quantiles {
		for _, n := range []int64{6, 29, 30, 50, 100, 299, 300, 1000, 2995, 3000} {
			l, u, twoSided := rankInterval(n, q, 0.95)
			if !twoSided {
				continue // TestTooFew
			}
			cum := binomialCum(n, q)
			mass, below, above := rankMass(cum, l, u)
			if l < 1 || u > n || mass < 0.95 {
				t.Errorf("rankInterval(%d, %v) = %d, %d: P(l ≤ B < u) = %.4f; want 1 ≤ l < u ≤ n and ≥ 0.95", n, q, l, u, mass)
			}
			for a := int64(1); a < n; a++ {
				for b := a + 1; b <= min(n, a+u-l); b++ {
					m, lo, hi := rankMass(cum, a, b)
					if m >= 0.95 && (b-a < u-l || math.Abs(lo-hi) < math.Abs(below-above)-1e-12) {
						t.Errorf("rankInterval(%d, %v) = %d, %d (mass %.4f, tails %.4f/%.4f); %d, %d is shorter or more central (mass %.4f, tails %.4f/%.4f)",
							n, q, l, u, mass, below, above, a, b, m, lo, hi)
					}
				}
			}
		}
	}
}

// TestTooFew: below the counts where 1 − qⁿ − (1−q)ⁿ reaches 95%, no
// two-sided interval; the lower rank is the largest with P(B ≥ l) ≥ 95%.
func TestTooFew(t *testing.T) {
	tests := []struct {
		name     string
		q        float64
		n        int64
		twoSided bool
		l        int64 // when one-sided
	}{
		{name: "p50 of 5", q: 0.5, n: 5, l: 1},
		{name: "p50 of 6", q: 0.5, n: 6, twoSided: true},
		{name: "p50 of 1", q: 0.5, n: 1, l: 0},
		{name: "p90 of 28", q: 0.9, n: 28, l: 22},
		{name: "p90 of 29", q: 0.9, n: 29, twoSided: true},
		{name: "p99 of 33 logins", q: 0.99, n: 33, l: 32},
		{name: "p99 of 298", q: 0.99, n: 298, l: 292},
		{name: "p99 of 299", q: 0.99, n: 299, twoSided: true},
		{name: "p999 of 30: above the largest", q: 0.999, n: 30, l: 30},
		{name: "p999 of 2994", q: 0.999, n: 2994, l: 2988},
		{name: "p999 of 2995", q: 0.999, n: 2995, twoSided: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, u, twoSided := rankInterval(tt.n, tt.q, 0.95)
			if twoSided != tt.twoSided || !twoSided && (l != tt.l || u != tt.n+1) {
				t.Fatalf("rankInterval(%d, %v) = %d, %d, %v; want two-sided %v (one-sided: %d, %d)", tt.n, tt.q, l, u, twoSided, tt.twoSided, tt.l, tt.n+1)
			}
			if twoSided {
				return
			}
			cum := binomialCum(tt.n, tt.q)
			if _, below, _ := rankMass(cum, l, u); 1-below < 0.95 {
				t.Errorf("rankInterval(%d, %v) lower rank %d: P(B ≥ l) = %.4f, want ≥ 0.95", tt.n, tt.q, l, 1-below)
			}
			if _, below, _ := rankMass(cum, l+1, u); l < tt.n && 1-below >= 0.95 {
				t.Errorf("rankInterval(%d, %v) lower rank %d: %d also has P(B ≥ l) ≥ 0.95", tt.n, tt.q, l, l+1)
			}
		})
	}
}

// TestNormalRanks checks the normal approximation against the exact
// binomial just past the switch-over, and the exact binomial at n = 10⁹.
func TestNormalRanks(t *testing.T) {
	for _, q := range quantiles {
		n := int64(math.Ceil(exactSigma*exactSigma/(q*(1-q)))) + 1
		b := newBinomial(n, q)
		el, eu := b.shortest(0.95)
		nl, nu := normalRanks(n, q, 0.95)
		if m := b.mass(b.index(nl), b.index(nu-1)); m < 0.95 || nl > el || nu < eu || (nu-nl)-(eu-el) > 4 {
			t.Errorf("normalRanks(%d, %v) = %d, %d (mass %.6f); want ≥ 0.95 and holding the exact %d, %d within 2 ranks a side",
				n, q, nl, nu, m, el, eu)
		}
	}
	b := newBinomial(1e9, 0.999) // σ ≈ 999.5: still exact
	el, eu := b.shortest(0.95)
	nl, nu := normalRanks(1e9, 0.999, 0.95)
	if m := b.mass(b.index(el), b.index(eu-1)); m < 0.95 || m > 0.9502 || max(el-nl, nu-eu) > 2 {
		t.Errorf("rankInterval(1e9, 0.999) = %d, %d (mass %.6f); want just over 0.95, within 2 ranks of %d, %d", el, eu, m, nl, nu)
	}
}

// TestRankReader reads order statistics back from a sketch: each within a
// bin's width of the true one, and in order.
func TestRankReader(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	values := append(latencies(rng, 3000, 2000), 0, 0, 0)
	for range 1000 {
		values = append(values, 5000.5) // one bin holding a thousand equal values
	}
	sk := messages.NewSketch()
	for _, v := range values {
		_ = sk.Add(v)
	}
	slices.Sort(values)
	r := newRankReader(sk)
	width := 2 * messages.SketchAccuracy / (1 - messages.SketchAccuracy)
	prev := -1.0
	for k, want := range values {
		got := r.at(float64(k + 1))
		if math.Abs(got-want) > width*want || got < prev {
			t.Fatalf("rankReader.at(%d) = %v µs, want within %.2f%% of %v µs and ≥ %v", k+1, got, 100*width, want, prev)
		}
		prev = got
	}
	if newRankReader(nil) != nil || newRankReader(messages.NewSketch()) != nil {
		t.Error("newRankReader(empty) != nil")
	}
}

// TestPercentileIntervals: the bounds are the order statistics the ranks
// name, read within a sketch bin; too few values give an open upper bound.
func TestPercentileIntervals(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	tests := []struct {
		name   string
		values [][]float64
	}{
		{name: "5 values", values: [][]float64{latencies(rng, 5, 2000)}},
		{name: "33 values", values: [][]float64{latencies(rng, 33, 2000)}},
		{name: "69 values, one slow", values: [][]float64{demoTail()}},
		{name: "1000 values, 20 strata", values: split(latencies(rng, 1000, 2000), 20)},
		{name: "unequal strata", values: [][]float64{latencies(rng, 2900, 1000), latencies(rng, 3, 90_000), latencies(rng, 97, 4000)}},
		{name: "zeros and sub-µs", values: [][]float64{{0, 0, 0, 0.3, 0.6, 1, 2, 2, 3, 4}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr := poolOf(t, recorded(t, 64, tt.values...)).Result().Phases["fetch"]
			all := slices.Sorted(slices.Values(slices.Concat(tt.values...)))
			n := int64(len(all))
			at := func(k int64) float64 { return all[min(max(k, 1), n)-1] / 1000 }
			for i, iv := range [4]messages.Interval{pr.CI.P50, pr.CI.P90, pr.CI.P99, pr.CI.P999} {
				l, u, twoSided := rankInterval(n, quantiles[i], 0.95)
				want := messages.Interval{at(l), at(u)}
				if l < 1 {
					want[0] = 0
				}
				if !twoSided {
					want[1] = math.Inf(1)
				}
				if near := func(a, b float64) bool { return a == b || math.Abs(a-b) <= 0.0101*b+1e-6 }; !near(iv[0], want[0]) || !near(iv[1], want[1]) {
					t.Errorf("Pool.Result() %s interval = %v, want %v (order statistics %d and %d of %d)", percentileNames[i], iv, want, l, u, n)
				}
				if slices.Contains(pr.TooFew, percentileNames[i]) == twoSided || iv.Open() == twoSided {
					t.Errorf("Pool.Result() %s: too few %v, interval %v; want too few and open %v", percentileNames[i], pr.TooFew, iv, !twoSided)
				}
			}
		})
	}
}

// TestCoverageThroughPool runs logins through real recorders, batches and
// the pool, four producers of unequal counts, and judges the intervals of
// Pool.Result as TestCoverage (coverage_test.go) does.
func TestCoverageThroughPool(t *testing.T) {
	d := covDists[1]
	trials := 400
	if testing.Short() {
		trials = 100
	}
	truth := d.percentiles()
	for _, n := range []int64{30, 300, 1000} {
		rng := rand.New(rand.NewPCG(5, uint64(n)))
		var cells [4]covCell
		for range trials {
			s := binJitter(rng)
			values, batches := loginBatches(rng, d, n, s)
			pr := poolOf(t, batches).Result().Phases["login"]
			tallyAll(&cells, pr.CI, pr.TooFew, values, truth, s)
		}
		for i := range quantiles {
			judge(t, "pool of "+d.name, n, i, cells[i])
		}
	}
}

// loginBatches records n logins drawn from d scaled by s over four
// producers, as whole microseconds, the recorder's resolution; it returns
// them, µs, and the producers' final batches.
func loginBatches(rng *rand.Rand, d covDist, n int64, s float64) ([]float64, []*messages.SampleBatch) {
	info := messages.StepInfo{FleetRate: 100, Rate: 25, Producers: 4, Duration: int64(time.Second)}
	var recs []*recorder.Recorder
	for i := range 4 {
		recs = append(recs, recorder.New("r1", 1, "p"+pad2(i), info, &recorder.Options{Seed: rng.Uint64()}))
	}
	values := make([]float64, n)
	for j := range values {
		values[j] = math.Max(1, math.Round(s*d.draw(rng)))
		u := rng.Float64()
		rec := recs[slices.IndexFunc(producerShares[:], func(s float64) bool { return u < s })]
		rec.Record(messages.Login, time.Duration(values[j])*time.Microsecond, time.Millisecond)
	}
	var batches []*messages.SampleBatch
	for _, rec := range recs {
		batches = append(batches, rec.Cut(0, time.Second, true, messages.Health{}))
	}
	return values, batches
}
