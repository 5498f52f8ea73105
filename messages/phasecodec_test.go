package messages

import (
	"bytes"
	"math"
	"reflect"
	"testing"

	"github.com/imapload/imapload/messages/internal/wire"
	"github.com/vmihailenco/msgpack/v5"
)

// FuzzPhaseDecoder checks that the hand-written PhaseStats decoder (through
// msgpack's reader and through DecodeBatch's wire.Reader, from which names
// and latencies are read in place) accepts, refuses and decodes exactly what
// msgpack's reflection does, and stops at the same byte.
func FuzzPhaseDecoder(f *testing.F) {
	for _, seed := range phaseSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want PhaseStats
		ref := bytes.NewReader(data)
		wantErr := msgpack.NewDecoder(ref).Decode(&want) // PhaseStats has no decoder of its own: reflection
		for _, r := range []interface {
			Read([]byte) (int, error)
			Len() int
		}{bytes.NewReader(data), wire.NewReader(data)} {
			var got PhaseStats
			err := wire.DecodeStruct(msgpack.NewDecoder(r), (*phaseDecoder)(&got), phaseFields)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("DecodeStruct(%T) error = %v, reflection's = %v", r, err, wantErr)
			}
			if err != nil {
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("DecodeStruct(%T) = %+v, reflection's %+v", r, got, want)
			}
			if r.Len() != ref.Len() {
				t.Fatalf("DecodeStruct(%T) left %d bytes, reflection %d", r, r.Len(), ref.Len())
			}
		}
	})
}

func phaseSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	full := PhaseStats{
		Phase: Fetch, Attempted: 5, Succeeded: 4, Dropped: 1,
		Response: Sample{Count: 4, Values: Micros{1, 200, 70_000, math.MaxUint32}, Sketch: SketchBytes{1, 2, 3}},
		Service:  Sample{Count: 4, Values: Micros{}, Sketch: SketchBytes{}},
		Errors:   ErrorList{{Kind: "NO x", Count: 1, Example: "a NO x"}},
	}
	enc := func(v any, asArray bool) []byte {
		var buf bytes.Buffer
		e := msgpack.NewEncoder(&buf)
		e.UseCompactInts(true)
		e.UseArrayEncodedStructs(asArray)
		if err := e.Encode(v); err != nil {
			tb.Fatal(err)
		}
		return buf.Bytes()
	}
	raw := func(m map[string]any) []byte { return enc(m, false) }
	return [][]byte{
		enc(full, false), enc(full, true), enc(PhaseStats{}, false), enc(PhaseStats{}, true),
		{0xc0}, {0x80}, {0x90}, {0x91, 0x01}, {0xa1, 'x'},
		raw(map[string]any{"phase": nil, "errors": nil, "response": nil, "tls": []any{}}),
		raw(map[string]any{"phase": "login", "unknown": map[string]any{"a": []any{1, 2}}, "attempted": -1}),
		raw(map[string]any{"response": map[string]any{"values": []any{nil, -1, 1.5}, "sketch": "text", "count": nil}}),
		raw(map[string]any{"response": map[string]any{"values": []any{int64(1 << 40), uint8(7)}}, "succeeded": 2.5}),
		raw(map[string]any{"service": []any{1, nil, nil}, "a_field_name_longer_than_16_bytes": 1}),
		append([]byte{0x82, 0xc4, 5, 'p', 'h', 'a', 's', 'e', 0xa5, 'f', 'e', 't', 'c', 'h', 0xc0}, 0xc0), // bin key, nil key
		append([]byte{0x82, 0xa9}, "attempted\x01\xa9attempted\x02"...),                                   // repeated field
	}
}

// TestPhaseDecoderAllocs holds the hand-written decoder to fewer
// allocations than reflection.
func TestPhaseDecoderAllocs(t *testing.T) {
	data := phaseSeeds(t)[0]
	var p PhaseStats
	hand := func() {
		_ = wire.DecodeStruct(msgpack.NewDecoder(wire.NewReader(data)), (*phaseDecoder)(&p), phaseFields)
	}
	refl := func() { _ = msgpack.NewDecoder(wire.NewReader(data)).Decode(&p) }
	ha, ra := testing.AllocsPerRun(100, hand), testing.AllocsPerRun(100, refl)
	if ha > ra {
		t.Errorf("DecodeStruct(PhaseStats) = %v allocs, want at most reflection's %v", ha, ra)
	}
}
