package wire

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func tooBig(v uint64) error { return fmt.Errorf("value %d out of range", v) }

// refUint32s is Uint32s written with msgpack's own calls: the plain path
// it must agree with.
func refUint32s(d *msgpack.Decoder, max int) ([]uint32, error) {
	n, err := ArrayLen(d, "values", max)
	if err != nil || n < 0 {
		return nil, err
	}
	s := make([]uint32, 0, n)
	for range n {
		v, err := d.DecodeUint64()
		if err != nil {
			return nil, err
		}
		if v > math.MaxUint32 {
			return nil, tooBig(v)
		}
		s = append(s, uint32(v))
	}
	return s, nil
}

func uintSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	enc := func(v any) []byte {
		var buf bytes.Buffer
		e := msgpack.NewEncoder(&buf)
		e.UseCompactInts(true)
		if err := e.Encode(v); err != nil {
			tb.Fatal(err)
		}
		return buf.Bytes()
	}
	return [][]byte{
		enc([]uint32{1, 200, 70_000, math.MaxUint32, 3, 3}), enc([]any{nil, -1, int64(1) << 40, 2.5}),
		enc([]uint32{}), {0xc0}, {0xdd, 0xff, 0xff, 0xff, 0xff, 0x01}, {0x93, 0xcd, 0x01}, {0xa1, 'x'},
	}
}

// FuzzUint32s checks that Uint32s accepts, refuses and decodes what
// msgpack's own calls do, and stops at the same byte, whether it reads in
// place (a Reader) or from a stream.
func FuzzUint32s(f *testing.F) {
	for _, seed := range uintSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ref := bytes.NewReader(data)
		want, wantErr := refUint32s(msgpack.NewDecoder(ref), 64)
		for _, r := range []interface {
			Read([]byte) (int, error)
			Len() int
		}{bytes.NewReader(data), NewReader(data)} {
			got, err := Uint32s(msgpack.NewDecoder(r), "values", 64, tooBig)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("Uint32s(%T) error = %v, msgpack's = %v", r, err, wantErr)
			}
			if err != nil {
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Uint32s(%T) = %v, msgpack's %v", r, got, want)
			}
			if r.Len() != ref.Len() {
				t.Fatalf("Uint32s(%T) left %d bytes, msgpack %d", r, r.Len(), ref.Len())
			}
		}
	})
}

func TestUint32sRefuses(t *testing.T) {
	tests := []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{name: "2^32 elements claim", data: []byte{0xdd, 0xff, 0xff, 0xff, 0xff, 0x01}, wantErr: "values: 4294967295 elements, at most 64"},
		{name: "2^32", data: []byte{0x91, 0xcf, 0, 0, 0, 1, 0, 0, 0, 0}, wantErr: "value 4294967296 out of range"},
		{name: "negative", data: []byte{0x91, 0xff}, wantErr: "value 18446744073709551615 out of range"},
		{name: "a string", data: []byte{0x91, 0xa1, 'x'}, wantErr: "invalid code"},
		{name: "cut short", data: []byte{0x92, 0x01}, wantErr: "EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, stream := range []bool{true, false} {
				var err error
				n := allocated(20, func() {
					var r interface{ Read([]byte) (int, error) } = NewReader(tt.data)
					if stream {
						r = bytes.NewReader(tt.data)
					}
					_, err = Uint32s(msgpack.NewDecoder(r), "values", 64, tooBig)
				})
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Uint32s(stream %v, % x) error = %v, want one containing %q", stream, tt.data, err, tt.wantErr)
				}
				if n > 8<<10 {
					t.Errorf("Uint32s(stream %v, % x) allocated %d B, want at most 8 KiB", stream, tt.data, n)
				}
			}
		})
	}
}

// allocated runs f n times and returns the bytes it allocated per run.
func allocated(n int, f func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	for range n {
		f()
	}
	runtime.ReadMemStats(&m1)
	return (m1.TotalAlloc - m0.TotalAlloc) / uint64(n)
}

func TestTextAndBytes(t *testing.T) {
	long := append([]byte{0xdb, 0xff, 0xff, 0xff, 0xff}, "x"...)
	for _, r := range []func([]byte) interface{ Read([]byte) (int, error) }{
		func(b []byte) interface{ Read([]byte) (int, error) } { return bytes.NewReader(b) },
		func(b []byte) interface{ Read([]byte) (int, error) } { return NewReader(b) },
	} {
		if got, err := Text(msgpack.NewDecoder(r([]byte{0xa5, 'f', 'e', 't', 'c', 'h'})), 16); err != nil || string(got) != "fetch" {
			t.Errorf("Text(fetch) = %q, %v; want fetch", got, err)
		}
		if got, err := Text(msgpack.NewDecoder(r([]byte{0xc0})), 16); err != nil || len(got) != 0 {
			t.Errorf("Text(nil) = %q, %v; want empty", got, err)
		}
		if _, err := Text(msgpack.NewDecoder(r(long)), 16); err == nil || !strings.Contains(err.Error(), "string of 4294967295 bytes, at most 16") {
			t.Errorf("Text(4 GiB claim) error = %v", err)
		}
		if _, err := Bytes(msgpack.NewDecoder(r(long)), "sketch", 64); err == nil || !strings.Contains(err.Error(), "sketch: 4294967295 bytes, at most 64") {
			t.Errorf("Bytes(4 GiB claim) error = %v", err)
		}
		if got, err := Bytes(msgpack.NewDecoder(r([]byte{0xc4, 2, 7, 8})), "sketch", 64); err != nil || !bytes.Equal(got, []byte{7, 8}) {
			t.Errorf("Bytes(2 bytes) = %v, %v", got, err)
		}
		if _, err := ArrayLen(msgpack.NewDecoder(r([]byte{0xdc, 0x01, 0x00})), "phases", 8); err == nil || !strings.Contains(err.Error(), "phases: 256 elements, at most 8") {
			t.Errorf("ArrayLen(256) error = %v", err)
		}
	}
	var errNil error
	if null, err := IsNil(msgpack.NewDecoder(NewReader([]byte{0xc0}))); !null || !errors.Is(err, errNil) {
		t.Errorf("IsNil(nil) = %v, %v; want true, nil", null, err)
	}
}
