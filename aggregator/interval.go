package aggregator

import (
	"math"
	"sort"

	"github.com/imapload/imapload/messages"
)

// roundingMicros is how far a reservoir value may be from the latency it
// stands for: the recorder rounds to the nearest microsecond, the sketch
// does not.
const roundingMicros = 1.0

// span is the smallest and the largest latency observed in a phase, µs:
// every percentile lies between them.
type span struct{ min, max float64 }

// intervals are the z-level intervals of the four percentiles, ms. all is
// the range of every latency, which the sample may not reach.
func (w *weighted) intervals(z float64, all span) messages.Intervals {
	if w.empty() {
		return messages.Intervals{}
	}
	return messages.Intervals{
		P50: w.interval(quantiles[0], z, all), P90: w.interval(quantiles[1], z, all),
		P99: w.interval(quantiles[2], z, all), P999: w.interval(quantiles[3], z, all),
	}
}

// interval is the z-level interval of the q-quantile (see doc.go). When every
// reservoir kept every value, the sample is the population and the interval
// is the exact order statistic. Otherwise it runs between the sample order
// statistics that bound it (orderBounds); a bound that falls on the sample's
// largest value is open, since the population may go on beyond it, and is
// replaced by the largest latency observed (likewise at the bottom). Either
// way it is then widened by the sketch's accuracy and the reservoir's
// rounding, so that it holds the percentile as the sketch reports it.
func (w *weighted) interval(q, z float64, all span) messages.Interval {
	j := w.rank(q)
	x := float64(w.micros(j))
	if !w.sampled {
		return widen(x, x)
	}
	lo, hi := w.orderBounds(q, z, j)
	a, b := float64(w.micros(lo)), float64(w.micros(hi))
	if lo == 0 {
		a = min(a, all.min)
	}
	if hi == len(w.keys)-1 {
		b = max(b, all.max)
	}
	return widen(a, b)
}

// orderBounds returns the indices of the sample order statistics that bound
// the q-quantile, whose estimate is at j: the Wilson score interval of the
// CDF at the quantile for the strata's effective sample size, read back as
// ranks. It is never narrower than the order statistics on either side of
// j, and runs to the sample's maximum when the sample expects fewer than one
// value above the quantile.
func (w *weighted) orderBounds(q, z float64, j int) (lo, hi int) {
	last := len(w.keys) - 1
	n := w.effectiveSize(q, j)
	pLo, pHi := wilson(q, n, z)
	lo, hi = 0, last
	if pLo > 0 {
		lo = w.rank(pLo)
	}
	if pHi < 1 && n*(1-q) >= 1 {
		hi = w.rank(pHi)
	}
	return min(lo, max(j-1, 0)), max(hi, min(j+1, last))
}

// wilson is the Wilson score interval with continuity correction (Newcombe
// 1998, method 4) of a proportion p observed in a sample of n (+Inf: no
// sampling error). The correction keeps the coverage near the nominal level
// in the tails of small samples, where the plain score interval falls short.
func wilson(p, n, z float64) (lo, hi float64) {
	if math.IsInf(n, 1) {
		return p, p
	}
	z2 := z * z
	d := 2 * (n + z2)
	lo = (2*n*p + z2 - 1 - z*math.Sqrt(max(0, z2-2-1/n+4*p*(n*(1-p)+1)))) / d
	hi = (2*n*p + z2 + 1 + z*math.Sqrt(max(0, z2+2-1/n+4*p*(n*(1-p)-1)))) / d
	return lo, hi
}

// effectiveSize is the size of the simple random sample that would know the
// pooled CDF near the q-quantile, estimated by the value at j, as well as
// these strata do (Korn and Graubard's effective sample size): P(1−P)/V,
// with P the pooled empirical CDF and V Woodruff's stratified variance of
// it. It is read at the value at j and at the next lower value, where the
// CDF's step starts, and the smaller is kept: at the largest value of every
// stratum V is 0. +Inf when neither point has a variance.
//
// Far in a tail, V rests on the few strata that hold a value beyond the
// point and comes out too small. So where fewer than tailValues sampled
// values are expected beyond the quantile, the size is at most the one the
// weights alone allow (kish), which forgoes the gain of stratifying.
func (w *weighted) effectiveSize(q float64, j int) float64 {
	x := w.micros(j)
	first := sort.Search(j, func(i int) bool { return w.micros(i) >= x })
	below := x
	if first > 0 {
		below = w.micros(first - 1)
	}
	pa, va, pb, vb := w.spread(below, x)
	n := min(kornGraubard(pa, va), kornGraubard(pb, vb))
	if k := w.kish(); k*min(q, 1-q) < tailValues {
		n = min(n, k)
	}
	return n
}

// tailValues is how many sampled values beyond a quantile Woodruff's
// variance needs before it is trusted on its own (see effectiveSize).
const tailValues = 10

// kish is the effective sample size of the weights alone, with the
// finite-population correction: 1 / Σᵢ (nᵢ/N)²/kᵢ · (nᵢ−kᵢ)/(nᵢ−1).
func (w *weighted) kish() float64 {
	s := 0.0
	for i, n := range w.n {
		k := w.k[i]
		if n > k && n > 1 {
			sh := n / w.total
			s += sh * sh / k * (n - k) / (n - 1)
		}
	}
	if s == 0 {
		return math.Inf(1)
	}
	return 1 / s
}

func kornGraubard(p, v float64) float64 {
	if !(v > 0) || !(p > 0) || !(p < 1) {
		return math.Inf(1)
	}
	return p * (1 - p) / v
}

// spread returns the pooled empirical CDF and the variance of its estimate at
// a and at b ≥ a (µs). The variance is Woodruff's:
//
//	V = Σᵢ (nᵢ/N)² · Fᵢ(1−Fᵢ)/kᵢ · (nᵢ−kᵢ)/(nᵢ−1),
//
// Fᵢ stratum i's empirical CDF; the last factor is the finite-population
// correction (a reservoir that kept every value adds no uncertainty). Only
// strata with values above a point contribute (elsewhere Fᵢ = 1), so it walks
// the sample's tail: short for the high percentiles that matter most.
func (w *weighted) spread(a, b uint32) (pa, va, pb, vb float64) {
	start := w.countAtMost(a)
	m := len(w.n)
	w.touched = w.touched[:0]
	for _, key := range w.keys[start:] {
		i := int32(uint32(key))
		if w.above[i] == 0 {
			w.touched = append(w.touched, i)
		}
		w.above[i]++
		if uint32(key>>32) > b {
			w.above[m+int(i)]++
		}
	}
	for _, i := range w.touched {
		va += w.stratumVariance(int(i), w.above[i])
		vb += w.stratumVariance(int(i), w.above[m+int(i)])
		w.above[i], w.above[m+int(i)] = 0, 0
	}
	return w.cdf(start), va, w.cdf(w.countAtMost(b)), vb
}

// stratumVariance is stratum i's term of V when above of its values lie
// above the point.
func (w *weighted) stratumVariance(i int, above int32) float64 {
	n, k := w.n[i], w.k[i]
	if n <= k || n <= 1 {
		return 0 // the reservoir holds every value: no sampling error
	}
	f := 1 - float64(above)/k
	share := n / w.total
	return share * share * f * (1 - f) / k * (n - k) / (n - 1)
}

// countAtMost is the number of sample values ≤ x µs.
func (w *weighted) countAtMost(x uint32) int {
	return sort.Search(len(w.keys), func(j int) bool { return w.micros(j) > x })
}

// cdf is the pooled weight of the first c sample values over the total.
func (w *weighted) cdf(c int) float64 {
	if c == 0 {
		return 0
	}
	return min(w.cum[c-1]/w.total, 1)
}

// widen turns sample values (µs) into an interval (ms) that also holds the
// sketch's reading of them: ±SketchAccuracy, and ±1 µs of rounding.
func widen(lo, hi float64) messages.Interval {
	a := messages.SketchAccuracy
	return messages.Interval{max(0, lo*(1-a)-roundingMicros) / 1000, (hi*(1+a) + roundingMicros) / 1000}
}

// disagreements names the percentiles whose sketch value lies outside their
// interval, which already allows for the sketch's accuracy and rounding.
func disagreements(sk messages.Percentiles, ci messages.Intervals) []string {
	var out []string
	for i, pair := range [4]struct {
		v  float64
		iv messages.Interval
	}{{sk.P50, ci.P50}, {sk.P90, ci.P90}, {sk.P99, ci.P99}, {sk.P999, ci.P999}} {
		if pair.v < pair.iv[0] || pair.v > pair.iv[1] {
			out = append(out, percentileNames[i])
		}
	}
	return out
}
