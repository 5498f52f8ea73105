package messages

import (
	"fmt"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/imapload/imapload/messages/internal/wire"
)

// SketchBins is an untrusted encoded sketch, decoded and validated into a
// plain list of bins. It is a reusable scratch: decode many sketches into one
// SketchBins and merge each into as many sketches as needed (a producer's,
// the pool's) without decoding it twice or allocating. The zero value is
// empty and ready to use. A SketchBins holds at most 4096 bins (48 KiB).
type SketchBins struct {
	b wire.Bins // positive bins ascending, within [minSketchIndex, maxSketchIndex]
}

// Count is the number of values in the decoded sketch.
func (s *SketchBins) Count() float64 { return s.b.Zero + s.b.Pos } // as DDSketch.GetCount sums it

// Decode replaces s's content with the untrusted sketch b. It refuses, with
// an error wrapping ErrInvalidSketch and leaving s empty: more than
// MaxSketchBytes, a truncated or unknown encoding, another index mapping,
// a count that is not a whole number from 0 to 2⁵² (or counts adding up to
// more), a negative latency, a value outside 1 ns..10¹² µs, and more than
// 4096 bins in a store.
func (s *SketchBins) Decode(b []byte) error {
	if len(b) > MaxSketchBytes {
		s.b.Reset()
		return fmt.Errorf("%w: %d bytes, at most %d", ErrInvalidSketch, len(b), MaxSketchBytes)
	}
	if err := wire.DecodeSketch(b, &s.b, &sketchLimits); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidSketch, err)
	}
	return nil
}

// Quantile is the q-quantile (0 ≤ q ≤ 1) of the decoded sketch, µs, read as
// DDSketch.GetValueAtQuantile reads it: the value of the first bin whose
// cumulative count exceeds q·(count−1). It is 0 for an empty sketch, and
// needs no DDSketch: one sketch's percentile costs a walk over its bins.
func (s *SketchBins) Quantile(q float64) float64 {
	total := s.Count()
	if total == 0 || !(q >= 0 && q <= 1) {
		return 0
	}
	rank := float64(q * (total - 1)) // as DDSketch rounds it
	if rank < s.b.Zero || len(s.b.Index) == 0 {
		return 0
	}
	rank -= s.b.Zero
	n := 0.0
	for i, c := range s.b.Count {
		if n += c; n > rank {
			return sketchMapping.Value(int(s.b.Index[i]))
		}
	}
	return sketchMapping.Value(int(s.b.Index[len(s.b.Index)-1]))
}

// Add adds o's values to s, as merging their sketches would: s then reads as
// the union, and holds as many bins as the union's sketch, however many
// sketches are added.
func (s *SketchBins) Add(o *SketchBins) {
	s.b.Zero += o.b.Zero
	s.b.Pos += o.b.Pos
	switch {
	case len(o.b.Index) == 0:
	case len(s.b.Index) == 0:
		s.b.Index, s.b.Count = append(s.b.Index[:0], o.b.Index...), append(s.b.Count[:0], o.b.Count...)
	default:
		s.b.Index, s.b.Count = mergeBins(s.b.Index, s.b.Count, o.b.Index, o.b.Count)
	}
}

// mergeBins merges two sorted bin lists into a new one, combining equal bins.
func mergeBins(ai []int32, ac []float64, bi []int32, bc []float64) ([]int32, []float64) {
	index := make([]int32, 0, len(ai)+len(bi))
	count := make([]float64, 0, len(ai)+len(bi))
	for len(ai) > 0 || len(bi) > 0 {
		switch {
		case len(bi) == 0 || len(ai) > 0 && ai[0] < bi[0]:
			index, count, ai, ac = append(index, ai[0]), append(count, ac[0]), ai[1:], ac[1:]
		case len(ai) == 0 || bi[0] < ai[0]:
			index, count, bi, bc = append(index, bi[0]), append(count, bc[0]), bi[1:], bc[1:]
		default:
			index, count = append(index, ai[0]), append(count, ac[0]+bc[0])
			ai, ac, bi, bc = ai[1:], ac[1:], bi[1:], bc[1:]
		}
	}
	return index, count
}

// MergeInto adds the decoded sketch to dst, which must use the contract's
// index mapping (a sketch made by NewSketch or DecodeSketch).
func (s *SketchBins) MergeInto(dst *ddsketch.DDSketch) error {
	if dst.IndexMapping != sketchMapping && !dst.IndexMapping.Equals(sketchMapping) {
		return fmt.Errorf("%w: merging into a sketch of another index mapping", ErrInvalidSketch)
	}
	if s.b.Zero > 0 {
		_ = dst.AddWithCount(0, s.b.Zero) // a count > 0 at value 0 cannot fail
	}
	if len(s.b.Index) == 0 {
		return nil
	}
	// The highest bin, then the lowest, then the rest: a dense store grows
	// once to the sketch's range instead of once every 64 bins.
	st, last := dst.GetPositiveValueStore(), len(s.b.Index)-1
	st.AddWithCount(int(s.b.Index[last]), s.b.Count[last])
	for i, index := range s.b.Index[:last] {
		st.AddWithCount(int(index), s.b.Count[i])
	}
	return nil
}

// SketchSum adds up decoded sketches bin by bin, into a dense array over
// every bin a latency sketch may hold (27 KiB): several times faster than
// merging each into a DDSketch when many small sketches make one, as a
// fleet's do. The zero value is empty and ready to use.
type SketchSum struct {
	zero   float64
	pos    float64
	counts []float64 // by bin index − minSketchIndex
	lo, hi int       // the non-empty part of counts
}

// Add adds b's values.
func (s *SketchSum) Add(b *SketchBins) {
	s.zero += b.b.Zero
	s.pos += b.b.Pos
	if len(b.b.Index) == 0 {
		return
	}
	if s.counts == nil {
		s.counts = make([]float64, maxSketchIndex-minSketchIndex+1)
		s.lo, s.hi = len(s.counts), -1
	}
	for i, index := range b.b.Index {
		s.counts[int(index)-minSketchIndex] += b.b.Count[i]
	}
	s.lo = min(s.lo, int(b.b.Index[0])-minSketchIndex)
	s.hi = max(s.hi, int(b.b.Index[len(b.b.Index)-1])-minSketchIndex)
}

// Count is the number of values added.
func (s *SketchSum) Count() float64 { return s.zero + s.pos }

// Reset empties s, keeping its memory.
func (s *SketchSum) Reset() {
	if s.counts != nil && s.lo <= s.hi {
		clear(s.counts[s.lo : s.hi+1])
	}
	s.zero, s.pos, s.lo, s.hi = 0, 0, len(s.counts), -1
}

// Quantile is the q-quantile of every value added, µs, as
// SketchBins.Quantile reads it.
func (s *SketchSum) Quantile(q float64) float64 {
	total := s.Count()
	if total == 0 || !(q >= 0 && q <= 1) {
		return 0
	}
	rank := float64(q * (total - 1)) // as DDSketch rounds it
	if rank < s.zero || s.counts == nil || s.lo > s.hi {
		return 0
	}
	rank -= s.zero
	n := 0.0
	for i, c := range s.counts[s.lo : s.hi+1] {
		if n += c; n > rank {
			return sketchMapping.Value(s.lo + i + minSketchIndex)
		}
	}
	return sketchMapping.Value(s.hi + minSketchIndex)
}

// Sketch returns a new sketch holding every value added; nil when none was.
func (s *SketchSum) Sketch() *ddsketch.DDSketch {
	if s.Count() == 0 {
		return nil
	}
	sk := NewSketch()
	if s.zero > 0 {
		_ = sk.AddWithCount(0, s.zero) // a count > 0 at value 0 cannot fail
	}
	if s.counts == nil { // only values of 0
		return sk
	}
	st := sk.GetPositiveValueStore()
	st.AddWithCount(s.hi+minSketchIndex, s.counts[s.hi]) // the highest first: the store grows once
	for i, c := range s.counts[s.lo:s.hi] {
		if c > 0 {
			st.AddWithCount(s.lo+i+minSketchIndex, c)
		}
	}
	return sk
}
