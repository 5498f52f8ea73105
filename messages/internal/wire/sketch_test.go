package wire

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/DataDog/sketches-go/ddsketch"
	enc "github.com/DataDog/sketches-go/ddsketch/encoding"
	"github.com/DataDog/sketches-go/ddsketch/mapping"
	"github.com/DataDog/sketches-go/ddsketch/store"
)

// testLimits are the contract's (see messages' sketch.go): 0.5% accuracy,
// values from 1 ns to 10¹² µs, 4096 bins a store.
var testLimits = func() Limits {
	m, err := mapping.NewLogarithmicMapping(0.005)
	if err != nil {
		panic(err)
	}
	return Limits{Mapping: m, MinIndex: m.Index(1e-3), MaxIndex: m.Index(1e12), MaxBins: 4096}
}()

func newSketch() *ddsketch.DDSketch {
	return ddsketch.NewDDSketch(testLimits.Mapping, store.NewCollapsingLowestDenseStore(4096), store.NewCollapsingLowestDenseStore(4096))
}

func encodeValues(tb testing.TB, vs ...float64) []byte {
	tb.Helper()
	s := newSketch()
	for _, v := range vs {
		if err := s.Add(v); err != nil {
			tb.Fatal(err)
		}
	}
	var b []byte
	s.Encode(&b, true)
	return b
}

// sketchOf is the sketch that holds bins.
func sketchOf(bins *Bins) *ddsketch.DDSketch {
	s := newSketch()
	if bins.Zero > 0 {
		_ = s.AddWithCount(0, bins.Zero)
	}
	for i, index := range bins.Index {
		s.GetPositiveValueStore().AddWithCount(int(index), bins.Count[i])
	}
	return s
}

func TestDecodeSketch(t *testing.T) {
	var bins Bins
	if err := DecodeSketch(encodeValues(t, 0, 1, 1, 1000), &bins, &testLimits); err != nil {
		t.Fatalf("DecodeSketch() error = %v", err)
	}
	if bins.Zero != 1 || bins.Pos != 3 || len(bins.Index) != 2 || !slices.Equal(bins.Count, []float64{2, 1}) {
		t.Errorf("DecodeSketch() = %+v, want 1 zero and bins of 2 and 1", bins)
	}
	var withMapping []byte
	s := ddsketch.NewDDSketch(testLimits.Mapping, store.NewDenseStore(), store.NewDenseStore())
	_ = s.Add(-1)
	s.Encode(&withMapping, false)
	if err := DecodeSketch(withMapping, &bins, &testLimits); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("DecodeSketch(a negative value) error = %v, want negative latencies", err)
	}
	if len(bins.Index) != 0 || bins.Zero != 0 || bins.Pos != 0 {
		t.Errorf("DecodeSketch() left %+v after an error, want empty", bins)
	}
}

func TestDecodeSketchAllocatesNothing(t *testing.T) {
	data := encodeValues(t, 1, 10, 100, 1000, 1e4, 1e5)
	var bins Bins
	_ = DecodeSketch(data, &bins, &testLimits)
	if n := testing.AllocsPerRun(10, func() { _ = DecodeSketch(data, &bins, &testLimits) }); n != 0 {
		t.Errorf("DecodeSketch() into a used Bins = %v allocs, want 0", n)
	}
}

func TestVarints(t *testing.T) {
	for _, v := range []uint64{0, 1, 0x7f, 0x80, 1 << 20, math.MaxUint64} {
		var b []byte
		enc.EncodeUvarint64(&b, v)
		if got, k := Uvarint(b); got != v || k != len(b) {
			t.Errorf("Uvarint(% x) = %d, %d; want %d, %d", b, got, k, v, len(b))
		}
		if _, k := Uvarint(b[:len(b)-1]); k != 0 {
			t.Errorf("Uvarint(% x, cut short) read %d bytes, want 0", b[:len(b)-1], k)
		}
	}
	for _, v := range []float64{0, 1, 3, 127, 65535, 1 << 52} {
		var b []byte
		enc.EncodeVarfloat64(&b, v)
		if got, k := Varfloat(b); got != v || k != len(b) {
			t.Errorf("Varfloat(% x) = %v, %d; want %v, %d", b, got, k, v, len(b))
		}
	}
	for _, v := range []int64{0, -1, 1, -600, math.MinInt64, math.MaxInt64} {
		var b []byte
		enc.EncodeVarint64(&b, v)
		if got, k := Varint(b); got != v || k != len(b) {
			t.Errorf("Varint(% x) = %d, %d; want %d, %d", b, got, k, v, len(b))
		}
	}
}

// FuzzDecodeSketch checks that DecodeSketch never panics, that what it
// accepts is within the limits, and that the sketch of the bins it decoded,
// encoded again, decodes to the same bins.
func FuzzDecodeSketch(f *testing.F) {
	f.Add(encodeValues(f, 0, 1, 10, 100, 1000, 1e6))
	f.Add(encodeValues(f, 3))
	f.Fuzz(func(t *testing.T, data []byte) {
		var bins Bins
		if err := DecodeSketch(data, &bins, &testLimits); err != nil {
			if strings.Contains(err.Error(), "decoder panic") {
				t.Fatalf("DecodeSketch() recovered a panic: %v", err)
			}
			if len(bins.Index) != 0 || bins.Zero != 0 || bins.Pos != 0 {
				t.Fatalf("DecodeSketch() error %v left %+v", err, bins)
			}
			return
		}
		sum := 0.0
		for i, index := range bins.Index {
			c := bins.Count[i]
			if i > 0 && index <= bins.Index[i-1] || int(index) < testLimits.MinIndex || int(index) > testLimits.MaxIndex || !(c > 0) || !WholeCount(c) {
				t.Fatalf("DecodeSketch() bin %d of %+v is out of order, of range or not a whole count", i, bins)
			}
			sum += c
		}
		if sum != bins.Pos || !WholeCount(bins.Zero) || bins.Zero+bins.Pos > MaxCount {
			t.Fatalf("DecodeSketch() = %+v: Pos is not the sum %v, or the counts are out of range", bins, sum)
		}
		var again []byte
		sketchOf(&bins).Encode(&again, true)
		var back Bins
		if err := DecodeSketch(again, &back, &testLimits); err != nil {
			t.Fatalf("DecodeSketch(encoded again) error = %v", err)
		}
		if back.Zero != bins.Zero || back.Pos != bins.Pos || !slices.Equal(back.Index, bins.Index) || !reflect.DeepEqual(back.Count, bins.Count) {
			t.Fatalf("encoded again: %+v, want %+v", back, bins)
		}
	})
}
