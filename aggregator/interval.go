package aggregator

import (
	"math"
	"slices"

	"github.com/imapload/imapload/messages"
)

// The percentiles' intervals are about the server's latency distribution,
// which another run of the same step would sample anew, not about the
// values this step happened to record (the merged sketch already holds
// those within its accuracy). They are distribution-free order-statistic
// intervals over the N commands the percentiles are over (see demand).
// Of N values, the number B that fall at or below the distribution's
// q-quantile is Binomial(N, q), so [x₍ₗ₎, x₍ᵤ₎], the l-th and u-th smallest,
// holds that quantile with probability P(l ≤ B < u), whatever the
// distribution. The ranks are picked from the binomial; the values are read
// off the merged response sketch (rankReader), and are not widened by its
// accuracy. Ranks among the commands never sent stand for unbounded
// latencies.
//
// A two-sided interval needs 1 − qᴺ − (1−q)ᴺ ≥ the confidence: at 95%, for
// P50 N ≥ 6, P90 N ≥ 29, P99 N ≥ 299, P99.9 N ≥ 2995. Below that, the
// percentile is named in TooFew and only a one-sided lower bound is given,
// with an open (+Inf) upper end: a narrow interval there would be a guess.

// exactSigma is the standard deviation of B up to which the ranks come from
// the binomial itself (at most about 18·exactSigma terms); beyond it, from
// its normal approximation (normalRanks), which is then within a rank of it.
const exactSigma = 1024

// negligible is the share of the binomial's largest term below which its
// terms are left out: together they hold less than 1e-15 of its mass.
const negligible = 1e-18

// percentileIntervals are the conf-level intervals of the four percentiles,
// ms, and the names of those too few values allow no two-sided one for.
// With no value at all, there is no interval (zeros).
func percentileIntervals(x orderStats, conf float64) (messages.Intervals, []string) {
	if x.n == 0 {
		return messages.Intervals{}, nil
	}
	var iv [4]messages.Interval
	var tooFew []string
	for i, q := range quantiles {
		var twoSided bool
		if iv[i], twoSided = x.interval(q, conf); !twoSided {
			tooFew = append(tooFew, percentileNames[i])
		}
	}
	return messages.Intervals{P50: iv[0], P90: iv[1], P99: iv[2], P999: iv[3]}, tooFew
}

// orderStats are the n commands' response times in order: the served ones
// (read off the merged sketch), then the never sent, unbounded ones.
type orderStats struct {
	r         *rankReader
	n, served int64
	max       float64 // the largest served response time, ms
}

// interval is the conf-level interval of the q-quantile, ms, and whether it
// is two-sided.
func (o orderStats) interval(q, conf float64) (messages.Interval, bool) {
	l, u, twoSided := rankInterval(o.n, q, conf)
	return messages.Interval{o.lower(l), o.upper(u)}, twoSided
}

// lower is the k-th smallest as a lower bound, ms: 0 when k < 1 (no bound);
// for a rank among the never sent, the largest served response time, which
// an unbounded one exceeds.
func (o orderStats) lower(k int64) float64 {
	switch {
	case k < 1:
		return 0
	case k > o.served:
		return o.max
	}
	return o.read(k)
}

// upper is the k-th smallest as an upper bound, ms: +Inf (open) beyond the
// served ones.
func (o orderStats) upper(k int64) float64 {
	if k > o.served {
		return math.Inf(1)
	}
	return o.read(k)
}

// read is the k-th smallest served response time, ms, never beyond the
// largest reported.
func (o orderStats) read(k int64) float64 { return min(o.r.at(float64(k))/1000, o.max) }

// rankInterval returns the ranks (1-based) of the order statistics that
// bound the q-quantile of n values with probability conf. With B ~
// Binomial(n, q), P(l ≤ B < u) ≥ conf with 1 ≤ l < u ≤ n, u − l as small as
// possible and, among such, P(B < l) and P(B ≥ u) as equal as possible.
// When no such ranks exist (1 − qⁿ − (1−q)ⁿ < conf), twoSided is false, u is
// n+1 (open) and l the largest rank with P(B ≥ l) ≥ conf, 0 if none.
func rankInterval(n int64, q, conf float64) (l, u int64, twoSided bool) {
	nf := float64(n)
	if -math.Expm1(nf*math.Log(q))-math.Exp(nf*math.Log1p(-q)) < conf {
		return newBinomial(n, q).lowerRank(conf), n + 1, false
	}
	if nf*q*(1-q) > exactSigma*exactSigma {
		l, u = normalRanks(n, q, conf)
	} else {
		l, u = newBinomial(n, q).shortest(conf)
	}
	return l, u, true
}

// normalRanks are the equal-tailed ranks from B's normal approximation with
// continuity correction, one rank wider on either side: that covers the
// skewness the approximation ignores, which moves the exact ranks by about
// half a rank.
func normalRanks(n int64, q, conf float64) (l, u int64) {
	z := math.Sqrt2 * math.Erfinv(conf)
	mu, sd := float64(n)*q, math.Sqrt(float64(n)*q*(1-q))
	l = int64(math.Floor(mu-z*sd+0.5)) - 1
	u = int64(math.Ceil(mu+z*sd+0.5)) + 1
	return max(l, 1), min(u, n)
}

// binomial is Binomial(n, q) around its mode: pmf[i] = P(B = lo+i) and
// cum[i] = P(B ≤ lo+i). It needs no factorials, so it is exact for any n:
// the terms are grown outwards from the mode's by the ratio of neighbours,
// until they become negligible, then normalised.
type binomial struct {
	n, lo, mode int64
	pmf, cum    []float64
}

func newBinomial(n int64, q float64) binomial {
	mode := min(n, int64(float64(n+1)*q))
	odds := q / (1 - q)
	terms := min(18*math.Sqrt(float64(n)*q*(1-q))+16, float64(n)+1) // about those within 9σ of the mode
	// Downwards, P(B = k−1) / P(B = k); upwards, P(B = k+1) / P(B = k).
	pmf := binomialTail(make([]float64, 0, int(terms)), mode, -1, func(k int64) float64 {
		if k <= 0 {
			return 0
		}
		return float64(k) / float64(n-k+1) / odds
	})
	slices.Reverse(pmf)
	b := binomial{n: n, lo: mode - int64(len(pmf)), mode: mode}
	b.pmf = binomialTail(append(pmf, 1), mode, 1, func(k int64) float64 {
		if k >= n {
			return 0
		}
		return float64(n-k) / float64(k+1) * odds
	})
	b.normalise()
	return b
}

// normalise scales the terms to sum to 1 and accumulates them into cum.
func (b *binomial) normalise() {
	b.cum = make([]float64, len(b.pmf))
	sum := 0.0
	for i, p := range b.pmf {
		sum += p
		b.cum[i] = sum
	}
	for i := range b.pmf {
		b.pmf[i] /= sum
		b.cum[i] /= sum
	}
}

// binomialTail appends to terms those after the mode's (1) in one direction
// (step ±1), relative to it, while they are not negligible: each is the
// previous one times ratio(k), k the previous one's value of B.
func binomialTail(terms []float64, mode, step int64, ratio func(k int64) float64) []float64 {
	for k, v := mode, 1.0; ; k += step {
		if v *= ratio(k); !(v >= negligible) {
			return terms
		}
		terms = append(terms, v)
	}
}

// below is P(B < lo+i).
func (b binomial) below(i int) float64 {
	if i <= 0 {
		return 0
	}
	return b.cum[i-1]
}

// mass is P(lo+i ≤ B ≤ lo+j).
func (b binomial) mass(i, j int) float64 { return b.cum[j] - b.below(i) }

// index is the index of B = k, clamped to the terms kept.
func (b binomial) index(k int64) int {
	return int(min(max(k-b.lo, 0), int64(len(b.pmf)-1)))
}

// shortest returns the ranks l, u of the shortest run l ≤ B < u within
// [1, n−1] holding at least conf, made central. It grows the run from the
// mode, taking the larger neighbour each time: B is unimodal, so that run
// holds the most mass of any of its length.
func (b binomial) shortest(conf float64) (l, u int64) {
	first, last := b.index(1), b.index(b.n-1)
	i := min(max(b.index(b.mode), first), last)
	j, m := i, b.pmf[i]
	for m < conf && (i > first || j < last) {
		if j == last || i > first && b.pmf[i-1] >= b.pmf[j+1] {
			i--
			m += b.pmf[i]
		} else {
			j++
			m += b.pmf[j]
		}
	}
	i, j = b.central(i, j, first, last, conf)
	return b.lo + int64(i), b.lo + int64(j) + 1
}

// central slides the run [i, j] (values of B, by index) to where, among the
// positions at which a run of its length still holds conf, the two tails
// P(B < l) and P(B ≥ u) are the closest. Those positions are contiguous
// (B is unimodal), so it walks out from [i, j] both ways.
func (b binomial) central(i, j, first, last int, conf float64) (int, int) {
	imbalance := func(d int) float64 { return math.Abs(b.below(i+d) - (1 - b.cum[j+d])) }
	best := 0
	for _, dir := range [2]int{-1, 1} {
		for d := dir; i+d >= first && j+d <= last && b.mass(i+d, j+d) >= conf; d += dir {
			if imbalance(d) < imbalance(best) {
				best = d
			}
		}
	}
	return i + best, j + best
}

// lowerRank is the largest l with P(B ≥ l) ≥ conf, 0 when even P(B ≥ 1)
// falls short: the one-sided lower bound.
func (b binomial) lowerRank(conf float64) int64 {
	l := int64(0)
	for i := range b.pmf {
		if 1-b.below(i) < conf {
			break
		}
		l = b.lo + int64(i)
	}
	return l
}
