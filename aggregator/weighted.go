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

	sampled bool    // some stratum kept fewer values than it observed
	above   []int32 // scratch: per stratum, values above a point (see spread)
	touched []int32 // scratch: the strata with values above it

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
		strata: sorted, n: resize(w.n, m), k: resize(w.k, m), above: resize(w.above, 2*m),
		keys: w.keys[:0], cum: w.cum, touched: w.touched[:0], sortBuf: w.sortBuf, radix: w.radix,
	}
	clear(w.above)
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

// percentiles are the weighted sample's percentiles and its largest value, ms.
func (w *weighted) percentiles() messages.Percentiles {
	if w.empty() {
		return messages.Percentiles{}
	}
	return messages.Percentiles{
		P50: w.ms(w.rank(quantiles[0])), P90: w.ms(w.rank(quantiles[1])),
		P99: w.ms(w.rank(quantiles[2])), P999: w.ms(w.rank(quantiles[3])),
		Max: w.ms(len(w.keys) - 1),
	}
}

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
