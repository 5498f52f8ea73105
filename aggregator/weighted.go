package aggregator

import (
	"hash/fnv"
	"math"
	"slices"
	"sort"

	"github.com/imapload/imapload/messages"
)

// weighted is one phase's response-time reservoirs pooled into a weighted
// sample. A reservoir that drew k values from n latencies is a stratum; each
// of its values stands for n/k latencies, so a producer that did five times
// fewer requests weighs five times less, whatever its reservoir size.
type weighted struct {
	keys  []uint64  // value<<32 | stratum index, ascending
	cum   []float64 // cum[j] = weight of keys[0..j]
	n, k  []float64 // per stratum: latencies observed, values kept
	total float64   // Σ n over strata
	sumW2 float64   // Σ of squared weights over values: Σ nᵢ²/kᵢ

	sampled bool // some stratum kept fewer values than it observed

	strata  []stratum // scratch: the strata in (producer, seq) order
	sortBuf []uint64  // scratch of sortKeys
	radix   []int     // scratch of sortKeys
}

// newWeighted pools strata, thinned to about maxSample values in all (see
// thin).
func newWeighted(strata []stratum, maxSample int) *weighted {
	return new(weighted).pool(strata, maxSample)
}

// pool makes w the weighted sample of strata, reusing w's memory: Result
// pools every phase into one weighted. Strata are taken in (producer, seq)
// order and the sort is stable, so equal values always add up in the same
// order and the result does not depend on the order batches arrived in.
func (w *weighted) pool(strata []stratum, maxSample int) *weighted {
	sorted := append(w.strata[:0], strata...)
	slices.SortFunc(sorted, func(a, b stratum) int {
		if a.key.less(b.key) {
			return -1
		}
		if b.key.less(a.key) {
			return 1
		}
		return 0
	})
	m := len(sorted)
	*w = weighted{
		strata: sorted, n: resize(w.n, m), k: resize(w.k, m),
		keys: w.keys[:0], cum: w.cum, sortBuf: w.sortBuf, radix: w.radix,
	}
	size := 0
	for _, s := range sorted {
		size += len(s.values)
	}
	frac := min(1, float64(maxSample)/float64(max(size, 1)))
	w.keys = resize(w.keys, min(size, maxSample+m))[:0]
	for i, s := range sorted {
		n := len(w.keys)
		w.keys = thin(w.keys, s, frac, uint64(i))
		w.n[i], w.k[i] = float64(s.count), float64(len(w.keys)-n)
		w.total += w.n[i]
		w.sumW2 += w.n[i] * w.n[i] / w.k[i]
		w.sampled = w.sampled || w.k[i] < w.n[i]
	}
	w.sortKeys()
	w.cum = resize(w.cum, len(w.keys))
	sum := 0.0
	for j, key := range w.keys {
		i := uint32(key)
		sum += w.n[i] / w.k[i]
		w.cum[j] = sum
	}
	return w
}

// resize returns s with length n, reusing its array when it is large enough.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// thin appends about frac of s's values (at least one) to keys, tagged with
// stratum i: every 1/frac-th value from a start drawn from the stratum's key.
// A reservoir is a uniform sample, so a systematic subsample of it is one too.
func thin(keys []uint64, s stratum, frac float64, i uint64) []uint64 {
	if frac >= 1 {
		for _, v := range s.values {
			keys = append(keys, uint64(v)<<32|i)
		}
		return keys
	}
	k := max(1, int(math.Round(frac*float64(len(s.values)))))
	step := float64(len(s.values)) / float64(k)
	h := fnv.New64a()
	h.Write([]byte(s.key.producer))
	start := float64(h.Sum64()^s.key.seq*0x9e3779b97f4a7c15) / (1 << 64) * step
	for j := range k {
		v := s.values[min(int(start+float64(j)*step), len(s.values)-1)]
		keys = append(keys, uint64(v)<<32|i)
	}
	return keys
}

func (w *weighted) empty() bool { return len(w.keys) == 0 }

// micros is the value at index j, µs.
func (w *weighted) micros(j int) uint32 { return uint32(w.keys[j] >> 32) }

// ms is the value at index j, ms.
func (w *weighted) ms(j int) float64 { return float64(w.micros(j)) / 1000 }

// index is the index of the inverse of the weighted empirical CDF at q: the
// first value whose cumulative weight reaches q of the total, clamped to the
// sample. Bimodality reads its modes' medians with it.
func (w *weighted) index(q float64) int {
	if q <= 0 {
		return 0
	}
	j := sort.SearchFloat64s(w.cum, q*w.total)
	return min(j, len(w.cum)-1)
}

// rank is the index of the q-quantile as DDSketch's GetValueAtQuantile
// defines it, with every value standing for its weight: the first value
// whose cumulative weight exceeds q·(N−1), N the latencies observed. When the
// reservoirs kept every value, that is the very order statistic the sketch
// reads (the ⌊q·(N−1)⌋-th from 0), so the two differ by the sketch's
// accuracy and the reservoir's rounding only.
func (w *weighted) rank(q float64) int {
	r := float64(q * (w.total - 1)) // as the sketch rounds it (no fused multiply-add)
	j := sort.Search(len(w.cum), func(j int) bool { return w.cum[j] > r })
	return min(j, len(w.cum)-1)
}

// quantile is the sample's q-quantile (see rank), ms.
func (w *weighted) quantile(q float64) float64 { return w.ms(w.rank(q)) }

// largest is the sample's largest value, ms.
func (w *weighted) largest() float64 { return w.ms(len(w.keys) - 1) }

// sortKeys sorts w.keys ascending. Keys are built in stratum order, so a
// stable sort on the value (the high 32 bits) is a full sort; for large
// samples a two-pass LSD radix sort does it in linear time.
func (w *weighted) sortKeys() {
	keys := w.keys
	if len(keys) < 4096 {
		slices.Sort(keys)
		return
	}
	w.sortBuf, w.radix = resize(w.sortBuf, len(keys)), resize(w.radix, 1<<16)
	count := w.radix
	src, dst := keys, w.sortBuf
	for shift := uint(32); shift < 64; shift += 16 {
		clear(count)
		for _, v := range src {
			count[(v>>shift)&0xffff]++
		}
		if count[(src[0]>>shift)&0xffff] == len(src) {
			continue // every key has this digit: the pass would change nothing
		}
		sum := 0
		for d, c := range count {
			count[d] = sum
			sum += c
		}
		for _, v := range src {
			d := (v >> shift) & 0xffff
			dst[count[d]] = v
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
}

// The reservoirs' own intervals serve one purpose: checking that the sketch
// and the reservoirs describe the same latencies. They are about the
// latencies served in this step, not the server's distribution, and are
// never reported.

// span is the smallest and the largest latency observed in a phase, µs:
// every percentile lies between them.
type span struct{ min, max float64 }

// roundingMicros is how far a reservoir value may be from the latency it
// stands for: the recorder rounds to the nearest microsecond, the sketch
// does not.
const roundingMicros = 1.0

// disagreements names the percentiles, those in Above aside, whose sketch
// value lies outside the reservoirs' z-level interval for the same
// quantile of the served latencies.
func (w *weighted) disagreements(sk messages.Percentiles, d demand, z float64, all span) []string {
	var out []string
	v := [4]float64{sk.P50, sk.P90, sk.P99, sk.P999}
	for i, q := range quantiles {
		qs, ok := d.servedQuantile(q)
		if !ok {
			continue
		}
		if iv := w.sampleInterval(qs, z, all); v[i] < iv[0] || v[i] > iv[1] {
			out = append(out, percentileNames[i])
		}
	}
	return out
}

// sampleInterval is the interval the reservoirs give the q-quantile of the
// served latencies, ms, widened by the sketch's accuracy and the
// reservoirs' rounding so that it holds the sketch's reading of them. When
// every reservoir kept every value, it is the exact order statistic.
// Otherwise it runs between the sample order statistics that bound it
// (orderBounds); a bound on the sample's largest value is open, since the
// latencies may go on beyond it, and is replaced by the largest observed
// (likewise at the bottom).
func (w *weighted) sampleInterval(q, z float64, all span) messages.Interval {
	j := w.rank(q)
	if !w.sampled {
		x := float64(w.micros(j))
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
// the q-quantile, whose estimate is at j: the Wilson score interval of q at
// the weights' effective sample size (kish), read back as ranks. It is
// never narrower than the order statistics on either side of j, and runs to
// the sample's maximum when the sample expects fewer than one value above
// the quantile.
func (w *weighted) orderBounds(q, z float64, j int) (lo, hi int) {
	last := len(w.keys) - 1
	n := w.kish()
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

// kish is the effective sample size of the weights (Kish's), with the
// finite-population correction: 1 / Σᵢ (nᵢ/N)²/kᵢ · (nᵢ−kᵢ)/(nᵢ−1). It
// ignores what stratifying gains, which makes the check conservative:
// Disagree flags a real difference, rarely chance.
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

// wilson is the Wilson score interval with continuity correction (Newcombe
// 1998, method 4) of a proportion p observed in a sample of n (+Inf: no
// sampling error).
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

// widen turns sample values (µs) into an interval (ms) that also holds the
// sketch's reading of them: ±SketchAccuracy, and ±1 µs of rounding.
func widen(lo, hi float64) messages.Interval {
	a := messages.SketchAccuracy
	return messages.Interval{max(0, lo*(1-a)-roundingMicros) / 1000, (hi*(1+a) + roundingMicros) / 1000}
}
