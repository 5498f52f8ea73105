package messages

import (
	"fmt"
	"math"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/DataDog/sketches-go/ddsketch/mapping"
	"github.com/DataDog/sketches-go/ddsketch/store"
)

// SketchAccuracy is the relative accuracy of every latency sketch: a quantile
// read from a sketch is within 0.5% of a value of the exact distribution.
const SketchAccuracy = 0.005

// maxSketchBins bounds a decoded sketch's memory. At 0.5% accuracy a decade
// spans about 230 bins, so 4096 bins cover 1 µs to beyond 10⁴ s unchanged.
const maxSketchBins = 4096

var sketchMapping = func() mapping.IndexMapping {
	m, err := mapping.NewLogarithmicMapping(SketchAccuracy)
	if err != nil {
		panic(err)
	}
	return m
}()

func sketchStore() store.Store { return store.NewCollapsingLowestDenseStore(maxSketchBins) }

// NewSketch returns an empty latency sketch with the contract's mapping. Record
// latencies in microseconds.
func NewSketch() *ddsketch.DDSketch {
	return ddsketch.NewDDSketch(sketchMapping, sketchStore(), sketchStore())
}

// EncodeSketch appends s's encoding (without its index mapping, which is fixed
// by the contract) to dst.
func EncodeSketch(dst []byte, s *ddsketch.DDSketch) []byte {
	s.Encode(&dst, true)
	return dst
}

// DecodeSketch decodes an untrusted sketch made by EncodeSketch. Its memory is
// bounded whatever the input claims; negative, NaN or infinite counts and
// values are refused.
func DecodeSketch(b []byte) (s *ddsketch.DDSketch, err error) {
	if len(b) > MaxSketchBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrInvalidSketch, len(b), MaxSketchBytes)
	}
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("%w: decoder panic: %v", ErrInvalidSketch, r)
		}
	}()
	s = NewSketch()
	if len(b) == 0 {
		return s, nil
	}
	if err := s.DecodeAndMergeWith(b); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSketch, err)
	}
	if err := checkSketch(s); err != nil {
		return nil, err
	}
	return s, nil
}

func checkSketch(s *ddsketch.DDSketch) error {
	if !s.GetNegativeValueStore().IsEmpty() {
		return fmt.Errorf("%w: negative latencies", ErrInvalidSketch)
	}
	var bad error
	s.ForEach(func(v, c float64) bool {
		if !(c >= 0) || math.IsInf(c, 0) || math.IsNaN(v) || math.IsInf(v, 0) {
			bad = fmt.Errorf("%w: bin %v has count %v", ErrInvalidSketch, v, c)
			return true
		}
		return false
	})
	if bad == nil && (math.IsNaN(s.GetZeroCount()) || s.GetZeroCount() < 0) {
		bad = fmt.Errorf("%w: zero count %v", ErrInvalidSketch, s.GetZeroCount())
	}
	return bad
}
