package aggregator

import (
	"math"
	"sort"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/DataDog/sketches-go/ddsketch/mapping"
	"github.com/imapload/imapload/messages"
)

// quantiles are the percentiles every result reports, in Percentiles order.
var quantiles = [4]float64{0.50, 0.90, 0.99, 0.999}

// percentileNames name quantiles in Disagree.
var percentileNames = [4]string{"p50", "p90", "p99", "p999"}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// sketchPercentiles reads the percentiles of a microsecond sketch, in ms.
// An empty or nil sketch gives zeros.
func sketchPercentiles(s *ddsketch.DDSketch) messages.Percentiles {
	var v [4]float64
	for i, q := range quantiles {
		v[i] = sketchQuantile(s, q)
	}
	return messages.Percentiles{P50: v[0], P90: v[1], P99: v[2], P999: v[3], Max: sketchMax(s)}
}

// sketchQuantile is the q-quantile of a microsecond sketch, in ms (0 if empty).
func sketchQuantile(s *ddsketch.DDSketch, q float64) float64 {
	if s == nil || s.IsEmpty() {
		return 0
	}
	v, err := s.GetValueAtQuantile(q)
	if err != nil || !finite(v) {
		return 0
	}
	return v / 1000
}

func sketchMax(s *ddsketch.DDSketch) float64 {
	if s == nil || s.IsEmpty() {
		return 0
	}
	v, err := s.GetMaxValue()
	if err != nil || !finite(v) {
		return 0
	}
	return v / 1000
}

func sketchMin(s *ddsketch.DDSketch) float64 {
	if s == nil || s.IsEmpty() {
		return 0
	}
	v, err := s.GetMinValue()
	if err != nil || !finite(v) {
		return 0
	}
	return v / 1000
}

// sketchCount is the number of values in s.
func sketchCount(s *ddsketch.DDSketch) float64 {
	if s == nil {
		return 0
	}
	return s.GetCount()
}

// mergeAll returns a new sketch holding every non-nil sketch of srcs, or nil.
func mergeAll(srcs ...*ddsketch.DDSketch) *ddsketch.DDSketch {
	var out *ddsketch.DDSketch
	for _, s := range srcs {
		switch {
		case s == nil || s.IsEmpty():
		case out == nil:
			out = s.Copy()
		default:
			_ = out.MergeWith(s)
		}
	}
	return out
}

// rankReader reads order statistics off a merged microsecond sketch. Within
// a bin, whose values lie within the sketch's accuracy of each other, the
// c values it holds are taken to be spread evenly in log scale over the bin:
// its j-th (1-based) is read at (j−½)/c of the way. A lone value reads as
// the bin's middle, as the sketch does; a bin holding thousands of values,
// as it does at large counts, no longer reads as a single value, so that an
// interval narrower than a bin still has two distinct ends.
type rankReader struct {
	zero  float64   // values of 0
	index []int     // non-empty bins, ascending
	cum   []float64 // cum[i]: values in bins index[0..i]
	m     mapping.IndexMapping
}

// newRankReader collects s's bins; nil when s is nil or empty.
func newRankReader(s *ddsketch.DDSketch) *rankReader {
	if s == nil || s.IsEmpty() {
		return nil
	}
	r := &rankReader{zero: s.GetZeroCount(), m: s.IndexMapping}
	var counts []float64
	s.GetPositiveValueStore().ForEach(func(i int, c float64) bool {
		r.index, counts = append(r.index, i), append(counts, c)
		return false
	})
	if !sort.IntsAreSorted(r.index) { // the store's order is not part of its contract
		sort.Sort(binsByIndex{r.index, counts})
	}
	r.cum = counts
	for i := 1; i < len(r.cum); i++ {
		r.cum[i] += r.cum[i-1]
	}
	return r
}

// at is the k-th smallest value (1-based), µs: 0 among the zeros or when r
// is nil (no value), the largest bin's top beyond the last value.
func (r *rankReader) at(k float64) float64 {
	if r == nil {
		return 0
	}
	k -= r.zero
	if k <= 0 || len(r.index) == 0 {
		return 0
	}
	i := min(sort.SearchFloat64s(r.cum, k), len(r.cum)-1)
	before := 0.0
	if i > 0 {
		before = r.cum[i-1]
	}
	t := min(max((k-before-0.5)/(r.cum[i]-before), 0), 1)
	lo, hi := r.m.LowerBound(r.index[i]), r.m.LowerBound(r.index[i]+1)
	return lo * math.Pow(hi/lo, t)
}

// binsByIndex sorts bin indices and their counts together.
type binsByIndex struct {
	index  []int
	counts []float64
}

func (b binsByIndex) Len() int           { return len(b.index) }
func (b binsByIndex) Less(i, j int) bool { return b.index[i] < b.index[j] }
func (b binsByIndex) Swap(i, j int) {
	b.index[i], b.index[j] = b.index[j], b.index[i]
	b.counts[i], b.counts[j] = b.counts[j], b.counts[i]
}
