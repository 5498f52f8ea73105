package messages

import (
	"sync"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/DataDog/sketches-go/ddsketch/mapping"
	"github.com/DataDog/sketches-go/ddsketch/store"
	"github.com/imapload/imapload/messages/internal/wire"
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

// DecodeSketch decodes an untrusted sketch made by EncodeSketch into a new
// sketch. It refuses what SketchBins.Decode refuses, and its memory is
// bounded whatever the input claims.
func DecodeSketch(b []byte) (*ddsketch.DDSketch, error) {
	s := NewSketch()
	if err := MergeSketch(s, b); err != nil {
		return nil, err
	}
	return s, nil
}

// MergeSketch validates the untrusted sketch b, made by EncodeSketch, and
// merges it into dst, a sketch made by NewSketch. On error dst is unchanged.
// It allocates nothing but what dst needs to grow: b is decoded into a
// scratch SketchBins shared through a sync.Pool.
func MergeSketch(dst *ddsketch.DDSketch, b []byte) error {
	bins := binsPool.Get().(*SketchBins)
	defer binsPool.Put(bins)
	if err := bins.Decode(b); err != nil {
		return err
	}
	return bins.MergeInto(dst)
}

var binsPool = sync.Pool{New: func() any { return new(SketchBins) }}

// The bin indices a latency sketch may hold: values from 1 ns (0.001 µs) to
// maxSketchMicros. That is about 3450 bins, fewer than maxSketchBins, so a
// store of NewSketch never collapses them.
var minSketchIndex, maxSketchIndex = sketchMapping.Index(1e-3), sketchMapping.Index(maxSketchMicros)

// sketchLimits are what SketchBins.Decode accepts.
var sketchLimits = wire.Limits{Mapping: sketchMapping, MinIndex: minSketchIndex, MaxIndex: maxSketchIndex, MaxBins: maxSketchBins}

// maxSketchMicros bounds a sketch's values: 11.6 days, longer than any step
// and its warm-up (the recorder does not clamp sketch values as it does
// reservoir values).
const maxSketchMicros = 1e12
