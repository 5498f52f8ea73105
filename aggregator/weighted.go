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
	above []int32   // scratch: per stratum, values above a point
}

// newWeighted pools strata, thinned to about maxSample values in all (see
// thin). Strata are taken in (producer, seq) order and the sort is stable, so
// equal values always add up in the same order and the result does not
// depend on the order batches arrived in.
func newWeighted(strata []stratum, maxSample int) *weighted {
	sorted := slices.Clone(strata)
	slices.SortFunc(sorted, func(a, b stratum) int {
		if a.key.less(b.key) {
			return -1
		}
		if b.key.less(a.key) {
			return 1
		}
		return 0
	})
	w := &weighted{n: make([]float64, len(sorted)), k: make([]float64, len(sorted)), above: make([]int32, len(sorted))}
	size := 0
	for _, s := range sorted {
		size += len(s.values)
	}
	frac := min(1, float64(maxSample)/float64(max(size, 1)))
	w.keys = make([]uint64, 0, min(size, maxSample+len(sorted)))
	for i, s := range sorted {
		n := len(w.keys)
		w.keys = thin(w.keys, s, frac, uint64(i))
		w.n[i], w.k[i] = float64(s.count), float64(len(w.keys)-n)
		w.total += w.n[i]
		w.sumW2 += w.n[i] * w.n[i] / w.k[i]
	}
	sortKeys(w.keys)
	w.cum = make([]float64, len(w.keys))
	sum := 0.0
	for j, key := range w.keys {
		i := uint32(key)
		sum += w.n[i] / w.k[i]
		w.cum[j] = sum
	}
	return w
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

// index is the index of the weighted q-quantile: the first value whose
// cumulative weight reaches q of the total (the inverse of the weighted
// empirical CDF), clamped to the sample.
func (w *weighted) index(q float64) int {
	if q <= 0 {
		return 0
	}
	j := sort.SearchFloat64s(w.cum, q*w.total)
	return min(j, len(w.cum)-1)
}

// percentiles are the weighted sample's percentiles and its largest value, ms.
func (w *weighted) percentiles() messages.Percentiles {
	if w.empty() {
		return messages.Percentiles{}
	}
	return messages.Percentiles{
		P50: w.ms(w.index(quantiles[0])), P90: w.ms(w.index(quantiles[1])),
		P99: w.ms(w.index(quantiles[2])), P999: w.ms(w.index(quantiles[3])),
		Max: w.ms(len(w.keys) - 1),
	}
}

// intervals are the z-level intervals of the four percentiles, ms.
func (w *weighted) intervals(z float64) messages.Intervals {
	if w.empty() {
		return messages.Intervals{}
	}
	return messages.Intervals{
		P50: w.interval(quantiles[0], z), P90: w.interval(quantiles[1], z),
		P99: w.interval(quantiles[2], z), P999: w.interval(quantiles[3], z),
	}
}

// interval is Woodruff's stratified interval for the q-quantile: the standard
// error of the pooled empirical CDF at the estimate x̂,
//
//	sd² = Σᵢ (nᵢ/N)² · Fᵢ(x̂)(1−Fᵢ(x̂)) / kᵢ · (nᵢ−kᵢ)/(nᵢ−1),
//
// with Fᵢ stratum i's empirical CDF and the last factor the finite-population
// correction (a reservoir that kept every value has no sampling error), is
// turned back into values by reading the weighted quantile at q ± z·sd.
func (w *weighted) interval(q, z float64) messages.Interval {
	j := w.index(q)
	sd := math.Sqrt(w.cdfVariance(w.micros(j)))
	lo, hi := q-z*sd, q+z*sd
	loJ, hiJ := 0, len(w.keys)-1
	if lo > 0 {
		loJ = w.index(lo)
	}
	if hi < 1 {
		hiJ = w.index(hi)
	}
	return messages.Interval{w.ms(loJ), w.ms(hiJ)}
}

// cdfVariance is the variance of the pooled empirical CDF at x (µs). Only
// strata with values above x can contribute (elsewhere Fᵢ = 1), so it walks
// the sample's tail: short for the high percentiles that matter most.
func (w *weighted) cdfVariance(x uint32) float64 {
	start := sort.Search(len(w.keys), func(j int) bool { return w.micros(j) > x })
	var touched []int32
	for _, key := range w.keys[start:] {
		i := int32(uint32(key))
		if w.above[i] == 0 {
			touched = append(touched, i)
		}
		w.above[i]++
	}
	v := 0.0
	for _, i := range touched {
		n, k := w.n[i], w.k[i]
		f := 1 - float64(w.above[i])/k
		w.above[i] = 0
		if n <= k || n <= 1 {
			continue // the reservoir holds every value: no sampling error
		}
		share := n / w.total
		v += share * share * f * (1 - f) / k * (n - k) / (n - 1)
	}
	return v
}

// sortKeys sorts keys ascending. Keys are built in stratum order, so a
// stable sort on the value (the high 32 bits) is a full sort; for large
// samples a two-pass LSD radix sort does it in linear time.
func sortKeys(keys []uint64) {
	if len(keys) < 4096 {
		slices.Sort(keys)
		return
	}
	buf := make([]uint64, len(keys))
	count := make([]int, 1<<16)
	src, dst := keys, buf
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
