package messages_test

import (
	"cmp"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/DataDog/sketches-go/ddsketch"
	enc "github.com/DataDog/sketches-go/ddsketch/encoding"
	"github.com/imapload/imapload/messages"
)

func TestSketchRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	draw := func(n int, f func() float64) []float64 {
		vs := make([]float64, n)
		for i := range vs {
			vs[i] = f()
		}
		return vs
	}
	tests := []struct {
		name   string
		values []float64
	}{
		{name: "one value", values: []float64{1234}},
		{name: "constant", values: draw(1000, func() float64 { return 1234 })},
		{name: "exponential", values: draw(20_000, func() float64 { return math.Round(100 + rng.ExpFloat64()*2000) })},
		{name: "bimodal login", values: draw(20_000, func() float64 {
			if rng.IntN(10) < 7 {
				return math.Round(300 + rng.NormFloat64()*30) // cache hits
			}
			return math.Round(80_000 + rng.NormFloat64()*5000) // bcrypt
		})},
		{name: "1 µs to MaxLatencyMicros", values: draw(20_000, func() float64 { return math.Round(math.Exp(rng.Float64() * math.Log(messages.MaxLatencyMicros))) })},
		{name: "with zeros", values: append(draw(500, func() float64 { return 0 }), draw(1500, func() float64 { return float64(1 + rng.IntN(100)) })...)},
		{name: "sub-microsecond", values: draw(1000, func() float64 { return 0.001 + rng.Float64() })},
	}
	quantiles := []float64{0, 0.25, 0.5, 0.9, 0.99, 0.999, 1}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := messages.NewSketch()
			for _, v := range tt.values {
				if err := s.Add(v); err != nil {
					t.Fatalf("Add(%v) error = %v", v, err)
				}
			}
			data := messages.EncodeSketch(nil, s)
			got, err := messages.DecodeSketch(data)
			if err != nil {
				t.Fatalf("DecodeSketch(EncodeSketch()) error = %v", err)
			}
			if got.GetCount() != float64(len(tt.values)) {
				t.Errorf("DecodeSketch() count = %v, want %d", got.GetCount(), len(tt.values))
			}
			sorted := slices.Sorted(slices.Values(tt.values))
			for _, q := range quantiles {
				v, err := got.GetValueAtQuantile(q)
				if err != nil {
					t.Fatalf("GetValueAtQuantile(%v) error = %v", q, err)
				}
				orig, _ := s.GetValueAtQuantile(q)
				if v != orig {
					t.Errorf("q%v = %v after the round trip, %v before", q, v, orig)
				}
				exact := sorted[int(q*float64(len(sorted)-1))]
				if rel := math.Abs(v-exact) / exact; exact == 0 && v != 0 || exact != 0 && rel > messages.SketchAccuracy+1e-9 {
					t.Errorf("q%v = %v, exact %v: off by %.3f%%, want ≤ 0.5%%", q, v, exact, 100*rel)
				}
			}
			t.Logf("%d values in %d bytes", len(tt.values), len(data))
		})
	}
}

func TestEncodeSketchAppends(t *testing.T) {
	prefix := []byte("batch:")
	out := messages.EncodeSketch(prefix, sketchOfValues(t, 1, 2, 3))
	if !strings.HasPrefix(string(out), "batch:") || len(out) <= len(prefix) {
		t.Fatalf("EncodeSketch(prefix, s) = %q, want prefix then the sketch", out)
	}
	s, err := messages.DecodeSketch(out[len(prefix):])
	if err != nil || s.GetCount() != 3 {
		t.Errorf("DecodeSketch() = count %v, %v; want 3", s.GetCount(), err)
	}
}

func TestDecodeSketchEmpty(t *testing.T) {
	for _, b := range [][]byte{nil, {}, messages.EncodeSketch(nil, messages.NewSketch())} {
		s, err := messages.DecodeSketch(b)
		if err != nil || !s.IsEmpty() {
			t.Errorf("DecodeSketch(%x) = %v, %v; want an empty sketch", b, s, err)
		}
	}
}

func sketchOfValues(tb testing.TB, vs ...float64) *ddsketch.DDSketch {
	tb.Helper()
	s := messages.NewSketch()
	for _, v := range vs {
		if err := s.Add(v); err != nil {
			tb.Fatalf("Add(%v) error = %v", v, err)
		}
	}
	return s
}

// bin is one entry of a hand-written store: the index's delta from the
// previous entry, and the count.
type bin struct {
	delta int64
	count float64
}

// rawStore writes a positive store in the index-deltas-and-counts encoding
// that claims numBins bins and holds bins.
func rawStore(numBins uint64, bins ...bin) []byte {
	var b []byte
	enc.EncodeFlag(&b, enc.NewFlag(enc.FlagTypePositiveStore, enc.BinEncodingIndexDeltasAndCounts))
	enc.EncodeUvarint64(&b, numBins)
	for _, x := range bins {
		enc.EncodeVarint64(&b, x.delta)
		enc.EncodeVarfloat64(&b, x.count)
	}
	return b
}

func rawZeroCount(c float64) []byte {
	var b []byte
	enc.EncodeFlag(&b, enc.FlagZeroCountVarFloat)
	enc.EncodeVarfloat64(&b, c)
	return b
}

// repeatBins returns n copies of the bins pattern.
func repeatBins(n int, pattern ...bin) []bin {
	var bs []bin
	for range n {
		bs = append(bs, pattern...)
	}
	return bs
}

// hostileEmptying adds and removes a count over and over, each time one bin
// higher. Before DecodeSketch refused negative counts, 60 KiB of this took
// 30 s and 500 MiB: every time the store's count is back at 0 it counts as
// empty and re-grows.
func hostileEmptying() []byte {
	bins := repeatBins(5000, bin{1, 1}, bin{0, -1})
	return rawStore(uint64(len(bins)), bins...)
}

// fractionalRepeat holds bin 100 twice, 65535 then 2⁻³⁷ values: FuzzDecodeSketch
// found that it decoded to a count of 65535.000000000007, which EncodeSketch
// wrote back as 65535 (the varfloat of c keeps the bits of c+1).
func fractionalRepeat() []byte { return rawStore(2, bin{100, 65535}, bin{0, 0x1p-37}) }

// hostileJumps climbs by more than the store's width each bin: each jump
// would cost a fresh 32 KiB array.
func hostileJumps() []byte {
	bins := append([]bin{{-600, 1}}, repeatBins(40, bin{4097, 1})...)
	return rawStore(uint64(len(bins)), bins...)
}

// hostileBinCount claims 2⁶⁴−1 bins and holds two.
func hostileBinCount() []byte { return rawStore(math.MaxUint64, bin{100, 1}, bin{1, 1}) }

// hostileManyBins holds one bin more than a store of ours ever encodes.
func hostileManyBins() []byte {
	bins := append([]bin{{-600, 1}}, repeatBins(4096, bin{0, 1})...)
	return rawStore(uint64(len(bins)), bins...)
}

func TestDecodeSketchRejects(t *testing.T) {
	withMapping := func(s *ddsketch.DDSketch) []byte {
		var b []byte
		s.Encode(&b, false)
		return b
	}
	other, err := ddsketch.NewDefaultDDSketch(0.01)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Add(5); err != nil {
		t.Fatal(err)
	}
	garbage := make([]byte, 64)
	for i := range garbage {
		garbage[i] = byte(i*37 + 11)
	}
	tests := []struct {
		name    string
		data    []byte
		wantErr string // substring; "" means valid
	}{
		{name: "valid", data: messages.EncodeSketch(nil, sketchOfValues(t, 1, 10, 100))},
		{name: "valid with the same mapping encoded", data: withMapping(sketchOfValues(t, 1, 10, 100))},
		{name: "valid hand-written store", data: rawStore(2, bin{100, 1}, bin{1, 3})},
		{name: "count 2^52", data: rawStore(1, bin{100, 1 << 52})},
		{name: "valid zero count", data: rawZeroCount(7)},
		{name: "reservoir's largest latency", data: messages.EncodeSketch(nil, sketchOfValues(t, messages.MaxLatencyMicros))},
		{name: "25 hours, beyond a reservoir", data: messages.EncodeSketch(nil, sketchOfValues(t, 25*3600e6))},
		{name: "largest latency", data: messages.EncodeSketch(nil, sketchOfValues(t, 1e12))},
		{name: "smallest latency", data: messages.EncodeSketch(nil, sketchOfValues(t, 0.001))},

		{name: "garbage", data: []byte{0xff, 0xff, 0xff}, wantErr: "messages: invalid sketch"},
		{name: "text", data: []byte("hello, world"), wantErr: "messages: invalid sketch"},
		{name: "bytes", data: garbage, wantErr: "messages: invalid sketch"},
		{name: "negative values", data: messages.EncodeSketch(nil, sketchOfValues(t, -5, 3)), wantErr: "negative latencies"},
		{name: "other mapping", data: withMapping(other), wantErr: "index mapping mismatch"},
		{name: "negative count", data: rawStore(2, bin{100, 2}, bin{1, -1}), wantErr: "count -1"},
		{name: "NaN count", data: rawStore(1, bin{100, math.NaN()}), wantErr: "count NaN"},
		{name: "infinite count", data: rawStore(1, bin{100, math.Inf(1)}), wantErr: "count +Inf"},
		{name: "counts overflow to infinity", data: rawStore(2, bin{100, math.MaxFloat64}, bin{0, math.MaxFloat64}), wantErr: "count 1.79"},
		{name: "fractional count", data: rawStore(1, bin{100, 2.5}), wantErr: "count 2.5"},
		{name: "repeated bin with a fractional count", data: fractionalRepeat(), wantErr: "count 7.275957614183426e-12"},
		{name: "count above 2^52", data: rawStore(1, bin{100, 1<<52 + 2}), wantErr: "count 4.503599627370498e+15"},
		{name: "counts add up beyond 2^52", data: rawStore(2, bin{100, 1 << 52}, bin{1, 1}), wantErr: "total count 4.503599627370497e+15, more than 2^52"},
		{name: "fractional zero count", data: rawZeroCount(0.5), wantErr: "zero count 0.5"},
		{name: "zero counts add up beyond 2^52", data: append(rawZeroCount(1<<52), rawZeroCount(1)...), wantErr: "zero count 1"},
		{name: "zeros and bins add up beyond 2^52", data: append(rawZeroCount(1<<52), rawStore(1, bin{100, 1})...), wantErr: "more than 2^52"},
		{name: "negative zero count", data: rawZeroCount(-1), wantErr: "count -1"},
		{name: "NaN zero count", data: rawZeroCount(math.NaN()), wantErr: "count NaN"},
		{name: "infinite zero count", data: rawZeroCount(math.Inf(1)), wantErr: "count +Inf"},
		{name: "value above 10^12 µs", data: messages.EncodeSketch(nil, sketchOfValues(t, 1.1e12)), wantErr: "out of range"},
		{name: "value below 1 ns", data: messages.EncodeSketch(nil, sketchOfValues(t, 1e-6)), wantErr: "out of range"},
		{name: "index near the int64 limit", data: rawStore(2, bin{math.MaxInt64, 1}, bin{math.MaxInt64, 1}), wantErr: "out of range"},
		{name: "2^64-1 bins claimed", data: hostileBinCount(), wantErr: "EOF"},
		{name: "more bins than a store holds", data: hostileManyBins(), wantErr: "more than 4096 bins"},
		{name: "store emptied and refilled", data: hostileEmptying(), wantErr: "count -1"},
		{name: "far jumps", data: hostileJumps(), wantErr: "out of range"},
		{name: "store flag alone", data: rawStore(1)[:1], wantErr: "EOF"},
		{name: "unknown bin encoding", data: []byte{0x01 | 7<<2, 0x01}, wantErr: "unknown bin encoding"},
		{name: "unknown feature flag", data: []byte{0x7c}, wantErr: "messages: invalid sketch"},
		{name: "over the size cap", data: make([]byte, messages.MaxSketchBytes+1), wantErr: "65537 bytes, at most 65536"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := messages.DecodeSketch(tt.data)
			if tt.wantErr == "" {
				if err != nil || s == nil || s.GetCount() == 0 {
					t.Fatalf("DecodeSketch() = %v, %v; want a sketch", s, err)
				}
				return
			}
			if s != nil || !errors.Is(err, messages.ErrInvalidSketch) {
				t.Fatalf("DecodeSketch() = %v, %v; want nil, ErrInvalidSketch", s, err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("DecodeSketch() error = %q, want it to mention %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "decoder panic") {
				t.Errorf("DecodeSketch() recovered a panic: %v", err)
			}
		})
	}
}

// TestDecodeSketchTruncated cuts a one-store sketch at every length: sketches-go
// drops a store's decoding error, so without DecodeSketch's own check a cut
// store decoded as a smaller sketch.
func TestDecodeSketchTruncated(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	s := messages.NewSketch()
	for range 5000 {
		if err := s.Add(1 + rng.ExpFloat64()*3000); err != nil {
			t.Fatal(err)
		}
	}
	data := messages.EncodeSketch(nil, s)
	for n := 1; n < len(data); n++ {
		got, err := messages.DecodeSketch(data[:n])
		if got != nil || !errors.Is(err, messages.ErrInvalidSketch) || strings.Contains(err.Error(), "decoder panic") {
			t.Fatalf("DecodeSketch(first %d of %d bytes) = %v, %v; want nil, ErrInvalidSketch", n, len(data), got, err)
		}
	}
}

// maxHostileSketchBytes bounds what decoding a hostile sketch may allocate:
// two stores of at most 4096 bins (32 KiB each) and their growth.
const maxHostileSketchBytes = 256 << 10

func TestDecodeSketchHostileAllocation(t *testing.T) {
	tests := []struct {
		name string
		data []byte
	}{
		{name: "store emptied and refilled", data: hostileEmptying()},
		{name: "far jumps", data: hostileJumps()},
		{name: "2^64-1 bins claimed", data: hostileBinCount()},
		{name: "more bins than a store holds", data: hostileManyBins()},
		{name: "garbage", data: []byte("\x05\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			allocs, bytes := cost(10, func() { _, err = messages.DecodeSketch(tt.data) })
			if !errors.Is(err, messages.ErrInvalidSketch) {
				t.Fatalf("DecodeSketch(%d hostile bytes) error = %v, want ErrInvalidSketch", len(tt.data), err)
			}
			t.Logf("DecodeSketch(%d bytes): %.0f allocs, %d B allocated: %v", len(tt.data), allocs, bytes, err)
			if bytes > maxHostileSketchBytes {
				t.Errorf("DecodeSketch(%d hostile bytes) allocated %d B, want ≤ %d B",
					len(tt.data), bytes, maxHostileSketchBytes)
			}
		})
	}
}

// TestDecodedSketchIsPlain checks that a decoded sketch takes further values
// and merges without limits: the decoding guards stay behind.
func TestDecodedSketchIsPlain(t *testing.T) {
	s, err := messages.DecodeSketch(messages.EncodeSketch(nil, sketchOfValues(t, 5)))
	if err != nil {
		t.Fatalf("DecodeSketch() error = %v", err)
	}
	for i := range 10_000 {
		if err := s.Add(float64(1 + i)); err != nil {
			t.Fatalf("Add() error = %v", err)
		}
	}
	if err := s.MergeWith(sketchOfValues(t, 7, 8)); err != nil {
		t.Fatalf("MergeWith() error = %v", err)
	}
	if got := s.GetCount(); got != 10_003 {
		t.Errorf("count = %v, want 10003", got)
	}
}

// TestMergeSketch merges sketches into one that already holds values, and
// checks that a refused sketch leaves it as it was.
func TestMergeSketch(t *testing.T) {
	tests := []struct {
		name    string
		data    []byte
		want    []float64 // values after the merge, beside the 1, 2 and 3 already there
		wantErr string
	}{
		{name: "values", data: messages.EncodeSketch(nil, sketchOfValues(t, 10, 20, 30)), want: []float64{10, 20, 30}},
		{name: "zeros", data: rawZeroCount(2), want: []float64{0, 0}},
		{name: "empty", data: nil},
		{name: "unsorted and repeated bins", data: rawStore(3, bin{200, 1}, bin{-100, 2}, bin{0, 1}), want: sketchValues(200, 100, 100, 100)},
		{name: "negative count", data: rawStore(2, bin{100, 2}, bin{1, -1}), wantErr: "count -1"},
		{name: "negative latency", data: messages.EncodeSketch(nil, sketchOfValues(t, 5, -5)), wantErr: "negative latencies"},
		{name: "truncated", data: messages.EncodeSketch(nil, sketchOfValues(t, 10, 20, 30))[:4], wantErr: "EOF"},
		{name: "far jump", data: hostileJumps(), wantErr: "out of range"},
		{name: "too many bins", data: hostileManyBins(), wantErr: "more than 4096 bins"},
		{name: "counts add up beyond 2^52", data: rawStore(2, bin{100, 1 << 52}, bin{1, 1 << 52}), wantErr: "more than 2^52"},
		{name: "fractional count", data: fractionalRepeat(), wantErr: "count 7.275957614183426e-12"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := sketchOfValues(t, 1, 2, 3)
			err := messages.MergeSketch(dst, tt.data)
			want := sketchOfValues(t, append([]float64{1, 2, 3}, tt.want...)...)
			if tt.wantErr != "" {
				if !errors.Is(err, messages.ErrInvalidSketch) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("MergeSketch() error = %v, want ErrInvalidSketch mentioning %q", err, tt.wantErr)
				}
				want = sketchOfValues(t, 1, 2, 3)
			} else if err != nil {
				t.Fatalf("MergeSketch() error = %v", err)
			}
			if !sameSketch(dst, want) {
				t.Errorf("after MergeSketch() the sketch holds %v, want %v", binsOf(dst), binsOf(want))
			}
		})
	}
}

// sketchValues are values whose bins are the indices given (µs).
func sketchValues(indices ...int) []float64 {
	m := messages.NewSketch().IndexMapping
	var vs []float64
	for _, i := range indices {
		vs = append(vs, m.Value(i))
	}
	return vs
}

func sameSketch(a, b *ddsketch.DDSketch) bool {
	return slices.Equal(binsOf(a), binsOf(b)) && a.GetZeroCount() == b.GetZeroCount()
}

// binsOf lists a sketch's bins as value, count pairs, ascending.
func binsOf(s *ddsketch.DDSketch) [][2]float64 {
	var out [][2]float64
	s.ForEach(func(v, c float64) bool {
		out = append(out, [2]float64{v, c})
		return false
	})
	slices.SortFunc(out, func(a, b [2]float64) int { return cmp.Compare(a[0], b[0]) })
	return out
}

// TestMergeSketchHostileAllocation holds MergeSketch to the bounds that
// DecodeSketch is held to, into a sketch that already holds values: it
// decodes into a pooled scratch, so a refused sketch costs nearly nothing.
func TestMergeSketchHostileAllocation(t *testing.T) {
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{name: "store emptied and refilled", data: hostileEmptying()},
		{name: "far jumps", data: hostileJumps()},
		{name: "2^64-1 bins claimed", data: hostileBinCount()},
		{name: "more bins than a store holds", data: hostileManyBins()},
		{name: "over the size cap", data: make([]byte, messages.MaxSketchBytes+1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dst := sketchOfValues(t, 1, 1000, 1e6)
			var err error
			allocs, bytes := cost(10, func() { err = messages.MergeSketch(dst, tt.data) })
			if !errors.Is(err, messages.ErrInvalidSketch) {
				t.Fatalf("MergeSketch(%d hostile bytes) error = %v, want ErrInvalidSketch", len(tt.data), err)
			}
			t.Logf("MergeSketch(%d bytes): %.0f allocs, %d B allocated: %v", len(tt.data), allocs, bytes, err)
			if bytes > maxHostileSketchBytes {
				t.Errorf("MergeSketch(%d hostile bytes) allocated %d B, want ≤ %d B",
					len(tt.data), bytes, maxHostileSketchBytes)
			}
			if dst.GetCount() != 3 {
				t.Errorf("after a refused MergeSketch() the sketch holds %v values, want 3", dst.GetCount())
			}
		})
	}
}

// TestMergeSketchAllocs: merging a valid sketch into one that already spans
// its range allocates nothing, through a SketchBins scratch (MergeSketch
// takes one from a sync.Pool, which the race detector empties at random).
func TestMergeSketchAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	src := messages.NewSketch()
	for range 1000 {
		_ = src.Add(2000 * math.Exp(0.7*rng.NormFloat64()))
	}
	data := messages.EncodeSketch(nil, src)
	dst := messages.NewSketch()
	if err := messages.MergeSketch(dst, data); err != nil {
		t.Fatal(err)
	}
	var bins messages.SketchBins
	merge := func() {
		if err := bins.Decode(data); err != nil {
			t.Fatal(err)
		}
		_ = bins.MergeInto(dst)
	}
	if allocs := testing.AllocsPerRun(100, merge); allocs > 0 {
		t.Errorf("SketchBins.Decode() and MergeInto() = %v allocs per merge, want 0", allocs)
	}
}

// TestSketchBinsAgreeWithDDSketch reads the same sketches through SketchBins
// (Quantile, Add), SketchSum and a merged DDSketch.
func TestSketchBinsAgreeWithDDSketch(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	merged := messages.NewSketch()
	var union messages.SketchBins
	var sum messages.SketchSum
	sum.Reset()
	for i := range 20 {
		s := messages.NewSketch()
		for range 1 + rng.IntN(300) {
			v := 500 * math.Exp(float64(i%4)+rng.NormFloat64())
			if rng.IntN(50) == 0 {
				v = 0
			}
			_ = s.Add(v)
		}
		data := messages.EncodeSketch(nil, s)
		var bins messages.SketchBins
		if err := bins.Decode(data); err != nil {
			t.Fatalf("SketchBins.Decode() error = %v", err)
		}
		for _, q := range []float64{0, 0.5, 0.99, 1} {
			if got, want := bins.Quantile(q), quantile(t, s, q); got != want {
				t.Errorf("part %d: SketchBins.Quantile(%v) = %v, DDSketch's %v", i, q, got, want)
			}
		}
		union.Add(&bins)
		sum.Add(&bins)
		if err := merged.MergeWith(s); err != nil {
			t.Fatal(err)
		}
	}
	if union.Count() != merged.GetCount() || sum.Count() != merged.GetCount() {
		t.Errorf("counts: SketchBins.Add %v, SketchSum %v, merged DDSketch %v", union.Count(), sum.Count(), merged.GetCount())
	}
	if s := sum.Sketch(); !sameSketch(s, merged) {
		t.Errorf("SketchSum.Sketch() = %v, want the merged sketch %v", binsOf(s), binsOf(merged))
	}
	for _, q := range []float64{0, 0.1, 0.5, 0.9, 0.99, 0.999, 1} {
		want := quantile(t, merged, q)
		if got := union.Quantile(q); got != want {
			t.Errorf("union SketchBins.Quantile(%v) = %v, merged DDSketch's %v", q, got, want)
		}
		if got := sum.Quantile(q); got != want {
			t.Errorf("SketchSum.Quantile(%v) = %v, merged DDSketch's %v", q, got, want)
		}
	}
	sum.Reset()
	if sum.Count() != 0 || sum.Quantile(0.5) != 0 || sum.Sketch() != nil {
		t.Errorf("SketchSum after Reset() = count %v, p50 %v; want empty", sum.Count(), sum.Quantile(0.5))
	}
}

func quantile(tb testing.TB, s *ddsketch.DDSketch, q float64) float64 {
	tb.Helper()
	v, err := s.GetValueAtQuantile(q)
	if err != nil {
		tb.Fatalf("GetValueAtQuantile(%v) error = %v", q, err)
	}
	return v
}

// FuzzMergeSketch checks MergeSketch against sketches-go's own decoder on
// every input MergeSketch accepts (sketches-go's is safe on those: they are
// the bounded ones), and that a refused input changes nothing. Its seeds are
// short: with hostileEmptying's 20 KB the fuzzer spent all but its first
// 3 s minimizing (500 runs/s over 30 s).
func FuzzMergeSketch(f *testing.F) {
	for _, seed := range [][]byte{
		messages.EncodeSketch(nil, sketchOfValues(f, 0, 1, 10, 100, 1000, 1e6)),
		rawStore(3, bin{100, 1}, bin{1, 3}, bin{7, 1}),
		rawStore(3, bin{200, 1}, bin{-100, 2}, bin{0, 1}),
		fractionalRepeat(),
		rawZeroCount(7),
		hostileBinCount(), hostileJumps(),
		rawStore(4, bin{1, 1}, bin{0, -1}, bin{1, 1}, bin{0, -1}), // hostileEmptying, short
		append(messages.EncodeSketch(nil, sketchOfValues(f, 3, 4)), rawStore(2, bin{300, 1}, bin{2, 1})...),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dst := sketchOfValues(t, 5, 50)
		err := messages.MergeSketch(dst, data)
		if err != nil {
			if !errors.Is(err, messages.ErrInvalidSketch) || strings.Contains(err.Error(), "decoder panic") {
				t.Fatalf("MergeSketch() error = %v, want ErrInvalidSketch", err)
			}
			if !sameSketch(dst, sketchOfValues(t, 5, 50)) {
				t.Fatalf("a refused MergeSketch() changed the sketch: %v", binsOf(dst))
			}
			return
		}
		ref := sketchOfValues(t, 5, 50)
		if err := ref.DecodeAndMergeWith(data); err != nil {
			t.Fatalf("MergeSketch() accepted what sketches-go refuses: %v", err)
		}
		if !sameSketch(dst, ref) { // whole counts add up exactly, in any order
			t.Fatalf("MergeSketch() = %v, sketches-go's decoder %v", binsOf(dst), binsOf(ref))
		}
		var bins messages.SketchBins
		if err := bins.Decode(data); err != nil {
			t.Fatalf("SketchBins.Decode() error = %v after MergeSketch() accepted it", err)
		}
		one := messages.NewSketch()
		_ = one.DecodeAndMergeWith(data)
		for _, q := range []float64{0, 0.5, 0.99, 1} {
			if one.GetCount() > 0 && bins.Quantile(q) != quantile(t, one, q) {
				t.Fatalf("SketchBins.Quantile(%v) = %v, DDSketch's %v", q, bins.Quantile(q), quantile(t, one, q))
			}
		}
	})
}
