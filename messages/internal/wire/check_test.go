package wire

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func TestCheck(t *testing.T) {
	nested := func(depth int) []byte { return append(bytes.Repeat([]byte{0x91}, depth), 0x01) }
	tests := []struct {
		name    string
		data    []byte
		rest    int
		wantErr string
	}{
		{name: "fixint and a byte after", data: []byte{0x05, 0xff}, rest: 1},
		{name: "map of a string and an array", data: []byte{0x81, 0xa1, 'a', 0x92, 0x01, 0xcd, 0x01, 0x02}},
		{name: "ext 8", data: []byte{0xc7, 0x02, 0x01, 0xaa, 0xbb}},
		{name: "nested to the limit", data: nested(MaxDepth)},
		{name: "empty", data: nil, wantErr: "truncated"},
		{name: "never-used code", data: []byte{0xc1}, wantErr: "never used"},
		{name: "4 GiB string claim", data: []byte{0xdb, 0xff, 0xff, 0xff, 0xff, 'x'}, wantErr: "header claims 4294967295 bytes"},
		{name: "2^32 elements claim", data: []byte{0xdd, 0xff, 0xff, 0xff, 0xff, 0x01}, wantErr: "container claims 4294967295 values"},
		{name: "map values counted twice", data: []byte{0x83, 0x01, 0x02, 0x03, 0x04}, wantErr: "container claims 6 values"},
		{name: "truncated length", data: []byte{0xda, 0x01}, wantErr: "truncated"},
		{name: "nested too deep", data: nested(MaxDepth + 1), wantErr: "nested deeper than 16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rest, err := Check(tt.data)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Check(% x) error = %v, want one containing %q", tt.data, err, tt.wantErr)
				}
				return
			}
			if err != nil || len(rest) != tt.rest {
				t.Fatalf("Check(% x) = %d bytes left, %v; want %d, nil", tt.data, len(rest), err, tt.rest)
			}
		})
	}
}

func TestCheckAllocatesNothing(t *testing.T) {
	data := append([]byte{0xdc, 0x01, 0x00}, bytes.Repeat([]byte{0xcd, 0x12, 0x34}, 256)...)
	if n := testing.AllocsPerRun(10, func() { _, _ = Check(data) }); n != 0 {
		t.Errorf("Check(%d bytes) = %v allocs, want 0", len(data), n)
	}
}

// FuzzCheck checks that what Check accepts is one value that msgpack skips
// over to the same byte.
func FuzzCheck(f *testing.F) {
	for _, seed := range [][]byte{
		{0x05}, {0x81, 0xa1, 'a', 0x92, 0x01, 0xcd, 0x01, 0x02}, {0xc7, 0x02, 0x01, 0xaa, 0xbb},
		{0xdb, 0xff, 0xff, 0xff, 0xff, 'x'}, {0xdd, 0x00, 0x00, 0x00, 0x02, 0xc0, 0xc3},
		{0xcb, 1, 2, 3, 4, 5, 6, 7, 8}, {0xd8, 0x01, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rest, err := Check(data)
		if err != nil {
			return
		}
		if len(rest) >= len(data) || !bytes.Equal(rest, data[len(data)-len(rest):]) {
			t.Fatalf("Check(% x) left % x, not a proper suffix", data, rest)
		}
		r := bytes.NewReader(data)
		if err := msgpack.NewDecoder(r).Skip(); err != nil {
			t.Fatalf("Check(% x) accepted what msgpack's Skip refuses: %v", data, err)
		}
		if r.Len() != len(rest) {
			t.Fatalf("Check(% x) left %d bytes, msgpack's Skip %d", data, len(rest), r.Len())
		}
	})
}
