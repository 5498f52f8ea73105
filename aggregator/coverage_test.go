package aggregator

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/imapload/imapload/messages"
)

// covDist is a generating distribution of latencies, µs, known exactly:
// tail gives S = P(X > x) and dS/dy at y = ln x; inv, when set, is S⁻¹.
type covDist struct {
	name string
	draw func(rng *rand.Rand) float64
	tail func(y float64) (s, ds float64)
	inv  func(w float64) float64
}

func normalTail(z float64) (s, density float64) {
	return math.Erfc(z/math.Sqrt2) / 2, math.Exp(-z*z/2) / math.Sqrt(2*math.Pi)
}

// logNormal is a lognormal tail with median m µs and σ in ln.
func logNormal(m, sigma float64) func(y float64) (float64, float64) {
	return func(y float64) (float64, float64) {
		s, f := normalTail((y - math.Log(m)) / sigma)
		return s, -f / sigma
	}
}

var covDists = []covDist{
	{name: "lognormal", draw: func(rng *rand.Rand) float64 { return 2000 * math.Exp(0.5*rng.NormFloat64()) }, tail: logNormal(2000, 0.5),
		inv: func(w float64) float64 { return 2000 * math.Exp(0.5*math.Sqrt2*math.Erfcinv(2*w)) }},
	{name: "login: 30% cache hits at 3 ms, 70% bcrypt at 15 ms", draw: func(rng *rand.Rand) float64 {
		if rng.Float64() < 0.3 {
			return 3000 * math.Exp(0.2*rng.NormFloat64())
		}
		return 15000 * math.Exp(0.2*rng.NormFloat64())
	}, tail: func(y float64) (float64, float64) {
		s1, d1 := logNormal(3000, 0.2)(y)
		s2, d2 := logNormal(15000, 0.2)(y)
		return 0.3*s1 + 0.7*s2, 0.3*d1 + 0.7*d2
	}},
	{name: "Pareto tail, α = 1.5, from 1.5 ms", draw: func(rng *rand.Rand) float64 {
		return 500 + 1000*math.Pow(1-rng.Float64(), -1/1.5)
	}, tail: func(y float64) (float64, float64) {
		x := math.Exp(y)
		if x <= 1500 {
			return 1, 0
		}
		r := (x - 500) / 1000
		return math.Pow(r, -1.5), -1.5 * math.Pow(r, -2.5) * x / 1000
	}, inv: func(w float64) float64 { return 500 + 1000*math.Pow(w, -1/1.5) }},
}

// upper is the x with P(X > x) = w: inv, or else by bisection on ln x,
// then Newton's steps from there, or from guess, a nearby solution, when
// there is one.
func (d covDist) upper(w, guess float64) float64 {
	if d.inv != nil {
		return d.inv(w)
	}
	y := math.Log(guess)
	if guess <= 0 {
		lo, hi := 0.0, math.Log(1e9)
		for hi-lo > 1e-9 {
			if s, _ := d.tail((lo + hi) / 2); s > w {
				lo = (lo + hi) / 2
			} else {
				hi = (lo + hi) / 2
			}
		}
		y = (lo + hi) / 2
	}
	for range 20 {
		s, ds := d.tail(y)
		step := (s - w) / ds
		if y -= step; math.Abs(step) < 1e-5 { // what is left is of order step², 1e-9
			break
		}
	}
	return math.Exp(y)
}

// covCell tallies one (distribution, count, percentile) over trials.
type covCell struct {
	trials, covered, rankCovered, flips, lowerCovered, tooFew, open int
}

// add tallies one interval iv of the quantile whose true value is truth;
// rankCovered says whether the exact order statistics it stands for held it.
func (c *covCell) add(iv messages.Interval, tooFew bool, truth float64, rankCovered bool) {
	covered := iv[0] <= truth && truth <= iv[1]
	c.trials++
	c.covered += btoi(covered)
	c.rankCovered += btoi(rankCovered)
	c.flips += btoi(covered != rankCovered)
	c.lowerCovered += btoi(iv[0] <= truth)
	c.tooFew += btoi(tooFew)
	c.open += btoi(iv.Open())
}

// judge checks a cell. The coverage is estimated as the exact probability
// that the ranks hold the true quantile, P(l ≤ B < u), which must be 95–97%,
// plus the difference the sketch's reading made, observed in the trials
// where the interval and the exact order statistics it stands for
// disagreed (flips): an unbiased estimate, far less noisy than the raw
// share. It must lie in 93–97% but for three standard errors of the flips'
// noise: the test fails on evidence that the coverage is outside, not on
// chance. The exact order statistics must hold the true quantile as often
// as the binomial says, but for a chance under 1e-4: that checks the draws.
func judge(t *testing.T, name string, n int64, i int, c covCell) {
	t.Helper()
	q, pct := quantiles[i], percentileNames[i]
	l, u, twoSided := rankInterval(n, q, 0.95)
	trials := float64(c.trials)
	if !twoSided {
		t.Logf("%s, n = %d, %s: too few for two sides; lower bound held %.1f%% of %d", name, n, pct, 100*float64(c.lowerCovered)/trials, c.trials)
		if c.tooFew != c.trials || c.open != c.trials {
			t.Errorf("%s, n = %d, %s: too few in %d and open in %d of %d trials, want all", name, n, pct, c.tooFew, c.open, c.trials)
		}
		return
	}
	mass := rankProbability(n, q, l, u)
	est := mass + float64(c.covered-c.rankCovered)/trials
	se := math.Sqrt(float64(c.flips)) / trials
	t.Logf("%s, n = %d, %s: coverage %.1f%% ± %.1f%% (ranks %.1f%%; raw %.1f%% of %d)", name, n, pct, 100*est, 100*se, 100*mass, 100*float64(c.covered)/trials, c.trials)
	if mass < 0.95 || mass > 0.97 || est < 0.93-3*se || est > 0.97+3*se || c.tooFew+c.open > 0 {
		t.Errorf("%s, n = %d, %s: coverage %.2f%% ± %.2f%% (ranks %.2f%%, too few %d, open %d of %d), want 93–97%%, two-sided",
			name, n, pct, 100*est, 100*se, 100*mass, c.tooFew, c.open, c.trials)
	}
	if cum := binomialCum(int64(c.trials), mass); min(cum[c.rankCovered+1], 1-cum[c.rankCovered]) < 1e-4 {
		t.Errorf("%s, n = %d, %s: exact order statistics %d, %d held the true value in %d of %d trials, want about %.2f%%", name, n, pct, l, u, c.rankCovered, c.trials, 100*mass)
	}
}

// rankProbability is P(l ≤ B < u), B ~ Binomial(n, q), summed from log-gamma.
func rankProbability(n int64, q float64, l, u int64) float64 {
	lgN, _ := math.Lgamma(float64(n + 1))
	sum := 0.0
	for k := l; k < u; k++ {
		lgK, _ := math.Lgamma(float64(k + 1))
		lgR, _ := math.Lgamma(float64(n - k + 1))
		sum += math.Exp(lgN - lgK - lgR + float64(k)*math.Log(q) + float64(n-k)*math.Log1p(-q))
	}
	return sum
}

// producerShares split the values among four producers of unequal counts.
var producerShares = [4]float64{0.5, 0.8, 0.95, 1}

func producerSketches() []*ddsketch.DDSketch {
	return []*ddsketch.DDSketch{messages.NewSketch(), messages.NewSketch(), messages.NewSketch(), messages.NewSketch()}
}

func addToOne(rng *rand.Rand, sks []*ddsketch.DDSketch, v float64) {
	u := rng.Float64()
	_ = sks[slices.IndexFunc(producerShares[:], func(s float64) bool { return u < s })].Add(v)
}

// binJitter is a random scale within one sketch bin. Each trial scales its
// distribution by one, so that where its true percentiles fall within a bin
// is uniform, as it is for a server's latencies: at a fixed place, reading
// a bin's values would move the coverage by up to about a percent either
// way.
func binJitter(rng *rand.Rand) float64 {
	a := messages.SketchAccuracy
	return math.Pow((1+a)/(1-a), rng.Float64())
}

// directTrial draws n values among the producers and tallies the four
// percentiles' intervals from their merged sketch; truth is in µs.
func directTrial(rng *rand.Rand, d covDist, n int64, truth [4]float64, cells *[4]covCell) {
	s := binJitter(rng)
	sks := producerSketches()
	values := make([]float64, n)
	for i := range values {
		values[i] = s * d.draw(rng)
		addToOne(rng, sks, values[i])
	}
	merged := mergeAll(sks...)
	x := orderStats{r: newRankReader(merged), n: n, served: n, max: sketchMax(merged)}
	ivs, tooFew := percentileIntervals(x, 0.95)
	tallyAll(cells, ivs, tooFew, values, truth, s)
}

// tallyAll tallies the four intervals of values drawn from a distribution
// scaled by s, whose unscaled true percentiles are truth, µs.
func tallyAll(cells *[4]covCell, ivs messages.Intervals, tooFew []string, values []float64, truth [4]float64, s float64) {
	n := int64(len(values))
	for i, iv := range [4]messages.Interval{ivs.P50, ivs.P90, ivs.P99, ivs.P999} {
		b := int64(0) // B, the values at or below the true percentile
		for _, v := range values {
			b += int64(btoi(v <= s*truth[i]))
		}
		l, u, _ := rankInterval(n, quantiles[i], 0.95)
		cells[i].add(iv, slices.Contains(tooFew, percentileNames[i]), s*truth[i]/1000, l <= b && b < u)
	}
}

// blockTrial tallies the q-quantile's interval at n values, too many to
// draw: it draws only the order statistics around the ranks l..u it reads
// (orderBlock), and gives the sketches the ones below as zeros and the ones
// above as one far larger value; truth is in µs. The interval is judged as
// via gives it (as computed, or as published).
func blockTrial(rng *rand.Rand, d covDist, n int64, q, truth float64, cell *covCell, via func(messages.Interval) messages.Interval) {
	l, u, _ := rankInterval(n, q, 0.95)
	s := binJitter(rng)
	a, xs := orderBlock(rng, d, n, l, u, func(x float64) int { return covMapping.Index(s * x) })
	b := a + int64(len(xs)) - 1
	sks := producerSketches()
	_ = sks[0].AddWithCount(0, float64(a-1))
	for j, v := range xs { // in four runs: which producer holds a value does not matter to a merge
		_ = sks[4*j/len(xs)].Add(s * v)
	}
	if b < n {
		_ = sks[1].AddWithCount(2*s*xs[len(xs)-1], float64(n-b))
	}
	merged := mergeAll(sks...)
	x := orderStats{r: newRankReader(merged), n: n, served: n, max: sketchMax(merged)}
	iv, twoSided := x.interval(q, 0.95)
	cell.add(via(iv), !twoSided, s*truth/1000, xs[l-a] <= truth && truth < xs[u-a])
}

// covMapping maps values to the latency sketches' bins.
var covMapping = messages.NewSketch().IndexMapping

// orderBlock draws, exactly, the order statistics of n values from d around
// the ranks l..u (1-based): U₍ₗ₎ ~ Beta(l, n−l+1); given U₍ₖ₎, the k−1 values
// below it are uniform over (0, U₍ₖ₎) and the n−k above over (U₍ₖ₎, 1), so
// with E exponential, U₍ₖ₋₁₎ = U₍ₖ₎·e^(−E/(k−1)) and 1−U₍ₖ₊₁₎ =
// (1−U₍ₖ₎)·e^(−E/(n−k)). It goes down while the values stay in x₍ₗ₎'s bin
// and up past x₍ᵤ₎'s, so that the bins read are complete. It returns the
// rank of its first value and the values, ascending.
func orderBlock(rng *rand.Rand, d covDist, n, l, u int64, bin func(float64) int) (int64, []float64) {
	g1, g2 := gammaDraw(rng, float64(l)), gammaDraw(rng, float64(n-l+1))
	wl := g2 / (g1 + g2) // 1 − U₍ₗ₎
	xl := d.upper(wl, 0)
	var xs []float64
	for k, w, x := l, wl, xl; k > 1; k-- {
		w -= (1 - w) * math.Expm1(-rng.ExpFloat64()/float64(k-1))
		if x = d.upper(w, x); bin(x) < bin(xl) {
			break
		}
		xs = append(xs, x)
	}
	a := l - int64(len(xs))
	slices.Reverse(xs)
	xs = append(xs, xl)
	for k, w, x := l, wl, xl; k < n && (k < u || bin(x) == bin(xs[u-a])); k++ {
		w *= math.Exp(-rng.ExpFloat64() / float64(n-k))
		x = d.upper(w, x)
		xs = append(xs, x)
	}
	return a, xs
}

// gammaDraw draws from Gamma(shape, 1), shape ≥ 1 (Marsaglia and Tsang 2000).
func gammaDraw(rng *rand.Rand, shape float64) float64 {
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		if math.Log(rng.Float64()) < x*x/2+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}

// TestCoverage: over known distributions and pooled counts from 30 to 10⁶,
// the two-sided 95% intervals hold the distribution's true percentile 93–97%
// of the time; where the count is too small for one, the percentile is
// marked too few and the interval open above.
func TestCoverage(t *testing.T) {
	for di, d := range covDists {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			truth := d.percentiles()
			for _, n := range []int64{30, 100, 300, 1000, 3000, 10_000, 100_000, 1_000_000} {
				cells := coverageCells(rand.New(rand.NewPCG(uint64(di+1), uint64(n))), d, n, truth)
				for i := range quantiles {
					judge(t, d.name, n, i, cells[i])
				}
			}
		})
	}
}

// percentiles are d's true percentiles, µs.
func (d covDist) percentiles() [4]float64 {
	var truth [4]float64
	for i, q := range quantiles {
		truth[i] = d.upper(1-q, 0)
	}
	return truth
}

// coverageCells runs the trials of n values: up to 3000, drawing them all
// and judging the four percentiles at once; beyond, by blocks, one
// percentile at a time.
func coverageCells(rng *rand.Rand, d covDist, n int64, truth [4]float64) [4]covCell {
	var cells [4]covCell
	if n <= 3000 {
		for range coverageTrials(n, 0) {
			directTrial(rng, d, n, truth, &cells)
		}
		return cells
	}
	for i, q := range quantiles {
		for range coverageTrials(n, q) {
			blockTrial(rng, d, n, q, truth[i], &cells[i], asComputed)
		}
	}
	return cells
}

// asComputed is an interval as computed.
func asComputed(iv messages.Interval) messages.Interval { return iv }

// coverageTrials is how many trials judge the q-quantile at n values. The
// reading off the sketch moves an interval's end across the true value in
// up to 2% of the trials at P99 and P99.9, so those take more, which their
// small blocks make cheap; at P50 and P90, where the blocks are large, it
// happens in under 0.5%.
func coverageTrials(n int64, q float64) int {
	k := 1
	if testing.Short() {
		k = 4
	}
	switch {
	case n <= 3000:
		return 500 / k
	case q >= 0.99:
		return 600 / k
	case n >= 1_000_000:
		return 100 / k
	}
	return 150 / k
}
