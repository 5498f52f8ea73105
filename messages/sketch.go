package messages

import (
	"errors"
	"fmt"
	"math"

	"github.com/DataDog/sketches-go/ddsketch"
	enc "github.com/DataDog/sketches-go/ddsketch/encoding"
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
// latencies in microseconds: 0, or from 0.001 (1 ns) to 10¹² (11.6 days);
// DecodeSketch refuses a sketch with values outside.
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
	pos, neg := newDecodeStore(), newDecodeStore()
	d := ddsketch.NewDDSketch(sketchMapping, pos, neg)
	if err := d.DecodeAndMergeWith(b); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSketch, err)
	}
	if err := errors.Join(pos.err, neg.err); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSketch, err)
	}
	if err := s.MergeWith(d); err != nil { // into plain stores, which later merges may grow
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

// maxSketchMicros bounds a sketch's values: 11.6 days, longer than any step
// and its warm-up (the recorder does not clamp sketch values as it does
// reservoir values).
const maxSketchMicros = 1e12

// The bin indices a latency sketch may hold: values from 1 ns (0.001 µs) to
// maxSketchMicros. That is about 3450 bins, fewer than maxSketchBins, so a
// decoded store never collapses.
var minSketchIndex, maxSketchIndex = sketchMapping.Index(1e-3), sketchMapping.Index(maxSketchMicros)

// decodeStore is the store a sketch is decoded into. It refuses what a
// CollapsingLowestDenseStore takes silently and pays for dearly: a count that
// is not finite and ≥ 0 (counts that bring the store back to empty make it
// re-grow on the next bin: a 60 KiB sketch took 30 s and 500 MiB), a value out
// of the latency range (each far jump costs a new 32 KiB array; at the
// extremes the store's index arithmetic overflows), and more bins than a store
// of ours encodes. sketches-go ignores a store's decoding error, so the first
// one is kept in err and the rest of the input is cut off.
type decodeStore struct {
	*store.CollapsingLowestDenseStore
	bins int   // bins decoded so far
	err  error // first problem
}

func newDecodeStore() *decodeStore {
	return &decodeStore{CollapsingLowestDenseStore: store.NewCollapsingLowestDenseStore(maxSketchBins)}
}

// Add is called by store.DecodeAndMergeWith for bins of count 1.
func (g *decodeStore) Add(index int) { g.AddWithCount(index, 1) }

// AddWithCount adds a decoded bin, or records why it cannot be trusted.
func (g *decodeStore) AddWithCount(index int, count float64) {
	g.bins++
	switch {
	case g.err != nil:
	case g.bins > maxSketchBins:
		g.err = fmt.Errorf("more than %d bins", maxSketchBins)
	case !(count >= 0) || math.IsInf(count, 1):
		g.err = fmt.Errorf("bin %d has count %v", index, count)
	case index < minSketchIndex || index > maxSketchIndex:
		g.err = fmt.Errorf("bin %d: value %g µs out of range", index, sketchMapping.Value(index))
	default:
		g.CollapsingLowestDenseStore.AddWithCount(index, count)
	}
}

// DecodeAndMergeWith decodes bins through g's own Add methods.
func (g *decodeStore) DecodeAndMergeWith(b *[]byte, mode enc.SubFlag) error {
	if err := store.DecodeAndMergeWith(g, b, mode); err != nil && g.err == nil {
		g.err = err
	}
	if g.err != nil {
		*b = (*b)[len(*b):]
	}
	return g.err
}
