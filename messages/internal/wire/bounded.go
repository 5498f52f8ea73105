package wire

import (
	"fmt"
	"math"

	"github.com/vmihailenco/msgpack/v5"
)

// ArrayLen reads an array header and refuses more than max elements, so that
// a short hostile message cannot make msgpack pre-allocate gigabytes. It is
// -1 for nil, as msgpack's DecodeArrayLen.
func ArrayLen(d *msgpack.Decoder, what string, max int) (int, error) {
	n, err := d.DecodeArrayLen()
	if err != nil {
		return 0, err
	}
	if n > max {
		return 0, fmt.Errorf("%s: %d elements, at most %d", what, n, max)
	}
	return n, nil
}

// Bytes reads bytes (or a string, or nil: nil is returned) of at most max
// bytes, into a new slice: msgpack v5.4.1 allocates a []byte of whatever
// length the header claims.
func Bytes(d *msgpack.Decoder, what string, max int) ([]byte, error) {
	n, err := d.DecodeBytesLen()
	if err != nil || n < 0 {
		return nil, err
	}
	if n > max {
		return nil, fmt.Errorf("%s: %d bytes, at most %d", what, n, max)
	}
	s := make([]byte, n)
	if err := d.ReadFull(s); err != nil {
		return nil, err
	}
	return s, nil
}

// Text reads a string (or bytes, or nil: empty), as msgpack's DecodeString
// takes it, of at most limit bytes. Its bytes are valid until the next read:
// within a Reader they are the input's own, without a copy.
func Text(d *msgpack.Decoder, limit int) ([]byte, error) {
	n, err := d.DecodeBytesLen()
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, fmt.Errorf("string of %d bytes, at most %d", n, limit)
	}
	return sourceOf(d).next(max(n, 0))
}

// Uint32s reads an array of at most max unsigned integers as msgpack's
// DecodeArrayLen and DecodeUint64 read them (nil is a nil slice, a nil
// value 0), refusing a value above math.MaxUint32 with tooBig's error.
// Within a Reader it reads runs of compact integers in place (a reservoir
// is most of a batch, and DecodeUint64 costs about 50 ns a value).
func Uint32s(d *msgpack.Decoder, what string, max int, tooBig func(v uint64) error) ([]uint32, error) {
	src := sourceOf(d)
	n, err := arrayLen(src)
	if err != nil || n < 0 {
		return nil, err
	}
	if n > max {
		return nil, fmt.Errorf("%s: %d elements, at most %d", what, n, max)
	}
	r, inPlace := src.(*Reader)
	s := make([]uint32, 0, min(n, src.Len())) // each value takes a byte at least
	for len(s) < n {
		if inPlace {
			if s = r.compactUints(s, n); len(s) == n {
				break
			}
		}
		v, err := readUint(src)
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

// compactUints appends to s, up to n values, the run of integers at r
// encoded as an encoder with compact integers writes them (fixint, uint8,
// uint16 or uint32), and stops at anything else for readUint to read. A
// reservoir's values mostly share one size, so it reads runs of one code.
func (r *Reader) compactUints(s []uint32, n int) []uint32 {
	b := r.b[r.off:]
	for len(s) < n && len(b) > 0 {
		switch c := b[0]; {
		case c <= 0x7f:
			for len(s) < n && len(b) > 0 && b[0] <= 0x7f {
				s, b = append(s, uint32(b[0])), b[1:]
			}
		case c == 0xcc:
			for len(s) < n && len(b) >= 2 && b[0] == c {
				s, b = append(s, uint32(b[1])), b[2:]
			}
		case c == 0xcd:
			for len(s) < n && len(b) >= 3 && b[0] == c {
				s, b = append(s, uint32(b[1])<<8|uint32(b[2])), b[3:]
			}
		case c == 0xce:
			for len(s) < n && len(b) >= 5 && b[0] == c {
				s, b = append(s, uint32(b[1])<<24|uint32(b[2])<<16|uint32(b[3])<<8|uint32(b[4])), b[5:]
			}
		}
		k := len(r.b) - len(b)
		if k == r.off {
			break // no progress: not a compact integer, or cut short
		}
		r.off = k
	}
	return s
}
