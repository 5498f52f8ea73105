package wire

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	enc "github.com/DataDog/sketches-go/ddsketch/encoding"
	"github.com/DataDog/sketches-go/ddsketch/mapping"
)

// Bins is an encoded DDSketch as a plain list of bins.
type Bins struct {
	Zero  float64   // values of 0
	Index []int32   // positive bins, ascending, within the Limits
	Count []float64 // their counts, whole numbers > 0
	Pos   float64   // Σ Count, at most MaxCount: exact in any order
}

// Reset empties b, keeping its memory.
func (b *Bins) Reset() {
	b.Zero, b.Pos = 0, 0
	b.Index, b.Count = b.Index[:0], b.Count[:0]
}

// Limits are what DecodeSketch accepts.
type Limits struct {
	Mapping            mapping.IndexMapping // the only index mapping accepted
	MinIndex, MaxIndex int                  // the bins a value may fall in
	MaxBins            int                  // bins encoded per store
}

// MaxCount bounds a sketch's count, and so each of its counts: whole
// numbers up to 2⁵² add up exactly, in any order, and survive the varfloat
// encoding, which keeps the bits of c+1 (exact up to 2⁵³−1). A sketch then
// reads the same however its bins were summed (encoded order, a store's
// order, repeated bins combined) and re-encoding writes back what was
// decoded. A fractional count, which no recorder makes, breaks both:
// 65535 + 2⁻³⁷ is written back as 65535.
const MaxCount = 1 << 52

// WholeCount reports whether c is a count a sketch may hold: a whole number
// from 0 to MaxCount. NaN is not.
func WholeCount(c float64) bool {
	return c >= 0 && c <= MaxCount && c == math.Trunc(c)
}

// DecodeSketch replaces s's content with the untrusted sketch b, encoded by
// sketches-go (see its encoding/flag.go), and refuses a truncated or unknown
// encoding, another index mapping, a count that is not a whole number from
// 0 to MaxCount (or counts adding up to more), a negative value, a bin
// outside lim and more than lim.MaxBins bins in a store. On error s is
// empty. The bins come out sorted by index, equal ones combined.
func DecodeSketch(b []byte, s *Bins, lim *Limits) (err error) {
	s.Reset()
	defer func() { // mapping.Decode is not ours
		if r := recover(); r != nil {
			err = fmt.Errorf("decoder panic: %v", r)
		}
		if err != nil {
			s.Reset()
		}
	}()
	d := sketchDecoder{lim: lim}
	for len(b) > 0 {
		if err := d.next(s, &b); err != nil {
			return err
		}
	}
	if s.Zero+s.Pos > MaxCount {
		return fmt.Errorf("total count %v, more than 2^52", s.Zero+s.Pos)
	}
	s.normalize()
	return nil
}

var errUnknownFlag = errors.New("unknown encoding flag")

// sketchDecoder reads the flags of sketches-go's encoding one at a time,
// with the bins seen so far per store.
type sketchDecoder struct {
	lim  *Limits
	bins [2]int // bins read, positive and negative store
}

func (d *sketchDecoder) next(s *Bins, b *[]byte) error {
	flag, err := enc.DecodeFlag(b)
	if err != nil {
		return err
	}
	switch flag.Type() {
	case enc.FlagTypePositiveStore:
		return d.store(s, b, flag.SubFlag(), false)
	case enc.FlagTypeNegativeStore:
		return d.store(s, b, flag.SubFlag(), true)
	case enc.FlagTypeIndexMapping:
		m, err := mapping.Decode(b, flag)
		if err != nil {
			return err
		}
		if !m.Equals(d.lim.Mapping) {
			return errors.New("index mapping mismatch")
		}
		return nil
	}
	switch flag {
	case enc.FlagZeroCountVarFloat:
		c, err := enc.DecodeVarfloat64(b)
		if err != nil {
			return err
		}
		if !WholeCount(c) || s.Zero+c > MaxCount {
			return fmt.Errorf("zero count %v", c)
		}
		s.Zero += c
		return nil
	case enc.FlagCount, enc.FlagSum, enc.FlagMin, enc.FlagMax: // exact summary statistics, ignored
		_, err := enc.DecodeFloat64LE(b)
		return err
	}
	return errUnknownFlag
}

// store reads one store's bins in any of the three bin encodings. Every bin
// is checked before it is kept: a CollapsingLowestDenseStore takes silently,
// and pays for dearly, counts that bring it back to empty (it re-grows on
// the next bin: a 60 KiB sketch took 30 s and 500 MiB), far jumps of index
// (each a new 32 KiB array; at the extremes its index arithmetic overflows)
// and more bins than a store of ours encodes. On error s is left half-read:
// DecodeSketch resets it.
func (d *sketchDecoder) store(s *Bins, b *[]byte, mode enc.SubFlag, neg bool) error {
	buf := *b
	n, k := Uvarint(buf)
	if k == 0 {
		return io.EOF
	}
	buf = buf[k:]
	var index, step int64
	switch mode {
	case enc.BinEncodingIndexDeltasAndCounts, enc.BinEncodingIndexDeltas:
	case enc.BinEncodingContiguousCounts:
		if index, k = Varint(buf); k == 0 {
			return io.EOF
		}
		buf = buf[k:]
		if step, k = Varint(buf); k == 0 {
			return io.EOF
		}
		buf, index = buf[k:], index-step
	default:
		return errors.New("unknown bin encoding")
	}
	// Locals, not s's fields, in the loop: it is the decoder's hot spot.
	seen, indices, counts, total := d.bins[btoi(neg)], s.Index, s.Count, s.Pos
	defer func() { s.Index, s.Count = indices, counts }() // on error too: the caller keeps their memory
	lo, hi, maxBins := int64(d.lim.MinIndex), int64(d.lim.MaxIndex), d.lim.MaxBins
	for ; n > 0; n-- { // every bin takes at least one byte: len(buf) bounds the loop
		delta, count := step, 1.0
		if mode != enc.BinEncodingContiguousCounts {
			if len(buf) > 0 && buf[0] < 0x80 { // Varint's fast path, by hand: it is not inlined
				delta, buf = int64(buf[0]>>1)^-int64(buf[0]&1), buf[1:]
			} else if delta, k = Varint(buf); k == 0 {
				return io.EOF
			} else {
				buf = buf[k:]
			}
		}
		if mode != enc.BinEncodingIndexDeltas {
			if len(buf) > 0 && buf[0] < 0x80 { // Varfloat's
				count, buf = oneByteFloats[buf[0]], buf[1:]
			} else if count, k = Varfloat(buf); k == 0 {
				return io.EOF
			} else {
				buf = buf[k:]
			}
		}
		index += delta
		if seen++; seen > maxBins {
			return fmt.Errorf("more than %d bins", maxBins)
		}
		if !WholeCount(count) || index < lo || index > hi || neg && count > 0 {
			return d.badBin(index, count)
		}
		if count > 0 {
			total += count // at most MaxBins counts ≤ 2⁵²: finite
			indices, counts = append(indices, int32(index)), append(counts, count)
		}
	}
	if total > MaxCount {
		return fmt.Errorf("total count %v, more than 2^52", total)
	}
	d.bins[btoi(neg)], *b, s.Pos = seen, buf, total
	return nil
}

// badBin says what is wrong with a bin whose count is not a whole number
// from 0 to 2⁵², whose value is out of range, or that holds negative values.
func (d *sketchDecoder) badBin(index int64, count float64) error {
	switch {
	case !WholeCount(count):
		return fmt.Errorf("bin %d has count %v", index, count)
	case index < int64(d.lim.MinIndex) || index > int64(d.lim.MaxIndex):
		return fmt.Errorf("bin %d: value %g µs out of range", index, d.lim.Mapping.Value(int(index)))
	}
	return errors.New("negative latencies")
}

// normalize sorts the bins by index and combines equal ones, as a store
// holds them. sketches-go writes them so; only a hand-made sketch needs the
// work. The sort is stable and equal bins add up in their order, so the
// counts are those a store would hold, to the last bit.
func (s *Bins) normalize() {
	if strictlyAscending(s.Index) {
		return
	}
	order := make([]int, len(s.Index))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(s.Index[a], s.Index[b]) })
	index, count := make([]int32, 0, len(order)), make([]float64, 0, len(order))
	for _, i := range order {
		if n := len(index); n > 0 && index[n-1] == s.Index[i] {
			count[n-1] += s.Count[i]
		} else {
			index, count = append(index, s.Index[i]), append(count, s.Count[i])
		}
	}
	s.Index, s.Count = index, count
}

func strictlyAscending(index []int32) bool {
	for i := 1; i < len(index); i++ {
		if index[i] <= index[i-1] {
			return false
		}
	}
	return true
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
