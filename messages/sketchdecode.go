package messages

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

var errUnknownFlag = errors.New("unknown encoding flag")

// sketchDecoder reads the flags of sketches-go's encoding (see its
// encoding/flag.go) one at a time, with the bins seen so far per store.
type sketchDecoder struct {
	bins [2]int // bins read, positive and negative store
}

func (d *sketchDecoder) next(s *SketchBins, b *[]byte) error {
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
		if !m.Equals(sketchMapping) {
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
		if !wholeCount(c) || s.zero+c > maxSketchCount {
			return fmt.Errorf("zero count %v", c)
		}
		s.zero += c
		return nil
	case enc.FlagCount, enc.FlagSum, enc.FlagMin, enc.FlagMax: // exact summary statistics, ignored
		_, err := enc.DecodeFloat64LE(b)
		return err
	}
	return errUnknownFlag
}

// store reads one store's bins in any of the three bin encodings. It decodes
// the varints itself, as sketches-go's encoding package does, with a fast
// path for the one-byte ones that most bins are made of. Every bin is
// checked before it is kept: a CollapsingLowestDenseStore takes silently,
// and pays for dearly, counts that bring it back to empty (it re-grows on
// the next bin: a 60 KiB sketch took 30 s and 500 MiB), far jumps of index
// (each a new 32 KiB array; at the extremes its index arithmetic overflows)
// and more bins than a store of ours encodes. On error s is left half-read:
// Decode resets it.
func (d *sketchDecoder) store(s *SketchBins, b *[]byte, mode enc.SubFlag, neg bool) error {
	buf := *b
	n, k := uvarint(buf)
	if k == 0 {
		return io.EOF
	}
	buf = buf[k:]
	var index, step int64
	switch mode {
	case enc.BinEncodingIndexDeltasAndCounts, enc.BinEncodingIndexDeltas:
	case enc.BinEncodingContiguousCounts:
		if index, k = varint(buf); k == 0 {
			return io.EOF
		}
		buf = buf[k:]
		if step, k = varint(buf); k == 0 {
			return io.EOF
		}
		buf, index = buf[k:], index-step
	default:
		return errors.New("unknown bin encoding")
	}
	// Locals, not s's fields, in the loop: it is the decoder's hot spot.
	seen, indices, counts, total := d.bins[btoi(neg)], s.index, s.count, s.pos
	defer func() { s.index, s.count = indices, counts }() // on error too: Decode keeps their memory
	lo, hi := int64(minSketchIndex), int64(maxSketchIndex)
	for ; n > 0; n-- { // every bin takes at least one byte: len(buf) bounds the loop
		delta, count := step, 1.0
		if mode != enc.BinEncodingContiguousCounts {
			if len(buf) > 0 && buf[0] < 0x80 { // varint's fast path, by hand: it is not inlined
				delta, buf = int64(buf[0]>>1)^-int64(buf[0]&1), buf[1:]
			} else if delta, k = varint(buf); k == 0 {
				return io.EOF
			} else {
				buf = buf[k:]
			}
		}
		if mode != enc.BinEncodingIndexDeltas {
			if len(buf) > 0 && buf[0] < 0x80 { // varfloat's
				count, buf = oneByteFloats[buf[0]], buf[1:]
			} else if count, k = varfloat(buf); k == 0 {
				return io.EOF
			} else {
				buf = buf[k:]
			}
		}
		index += delta
		if seen++; seen > maxSketchBins {
			return fmt.Errorf("more than %d bins", maxSketchBins)
		}
		if !wholeCount(count) || index < lo || index > hi || neg && count > 0 {
			return badBin(index, count)
		}
		if count > 0 {
			total += count // at most 8192 counts ≤ 2⁵²: finite
			indices, counts = append(indices, int32(index)), append(counts, count)
		}
	}
	if total > maxSketchCount {
		return fmt.Errorf("total count %v, more than 2^52", total)
	}
	d.bins[btoi(neg)], *b, s.pos = seen, buf, total
	return nil
}

// maxSketchCount bounds a sketch's count, and so each of its counts: whole
// numbers up to 2⁵² add up exactly, in any order, and survive the varfloat
// encoding, which keeps the bits of c+1 (exact up to 2⁵³−1). A sketch then
// reads the same however its bins were summed (encoded order, a store's
// order, repeated bins combined) and EncodeSketch writes back what was
// decoded. A fractional count, which no recorder makes, breaks both:
// 65535 + 2⁻³⁷ is written back as 65535.
const maxSketchCount = 1 << 52

// wholeCount reports whether c is a count a sketch may hold: a whole number
// from 0 to 2⁵². NaN is not.
func wholeCount(c float64) bool {
	return c >= 0 && c <= maxSketchCount && c == math.Trunc(c)
}

// badBin says what is wrong with a bin whose count is not a whole number
// from 0 to 2⁵², whose value is out of the latency range, or that holds
// negative latencies.
func badBin(index int64, count float64) error {
	switch {
	case !wholeCount(count):
		return fmt.Errorf("bin %d has count %v", index, count)
	case index < int64(minSketchIndex) || index > int64(maxSketchIndex):
		return fmt.Errorf("bin %d: value %g µs out of range", index, sketchMapping.Value(int(index)))
	}
	return errors.New("negative latencies")
}

// normalize sorts the bins by index and combines equal ones, as a store
// holds them. EncodeSketch writes them so; only a hand-made sketch needs the
// work. The sort is stable and equal bins add up in their order, so the
// counts are those a store would hold, to the last bit.
func (s *SketchBins) normalize() {
	if strictlyAscending(s.index) {
		return
	}
	order := make([]int, len(s.index))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(s.index[a], s.index[b]) })
	index, count := make([]int32, 0, len(order)), make([]float64, 0, len(order))
	for _, i := range order {
		if n := len(index); n > 0 && index[n-1] == s.index[i] {
			count[n-1] += s.count[i]
		} else {
			index, count = append(index, s.index[i]), append(count, s.count[i])
		}
	}
	s.index, s.count = index, count
}

func strictlyAscending(index []int32) bool {
	for i := 1; i < len(index); i++ {
		if index[i] <= index[i-1] {
			return false
		}
	}
	return true
}

// uvarint decodes enc.EncodeUvarint64's encoding at the start of b and
// returns it with its length, 0 when b is cut short. The one-byte case is
// small enough to be inlined.
func uvarint(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return uvarintSlow(b)
}

func uvarintSlow(b []byte) (uint64, int) {
	rest := b
	v, err := enc.DecodeUvarint64(&rest)
	if err != nil {
		return 0, 0
	}
	return v, len(b) - len(rest)
}

// varint decodes enc.EncodeVarint64's zig-zag encoding.
func varint(b []byte) (int64, int) {
	u, k := uvarint(b)
	return int64(u>>1) ^ -int64(u&1), k
}

// varfloat decodes enc.EncodeVarfloat64's encoding. A first byte < 0x80 is
// the whole value, a small count, looked up in oneByteFloats.
func varfloat(b []byte) (float64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return oneByteFloats[b[0]], 1
	}
	return varfloatSlow(b)
}

func varfloatSlow(b []byte) (float64, int) {
	rest := b
	v, err := enc.DecodeVarfloat64(&rest)
	if err != nil {
		return 0, 0
	}
	return v, len(b) - len(rest)
}

// oneByteFloats are the values of the one-byte varfloats.
var oneByteFloats = func() (t [0x80]float64) {
	for i := range t {
		b := []byte{byte(i)}
		t[i], _ = enc.DecodeVarfloat64(&b)
	}
	return t
}()

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
