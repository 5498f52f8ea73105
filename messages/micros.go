package messages

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/vmihailenco/msgpack/v5"
)

// Micros is a list of latencies in whole microseconds with a bounded decoder.
type Micros []uint32

// DecodeMsgpack decodes at most MaxReservoir latencies, each ≤ MaxLatencyMicros.
// Within DecodeBatch it reads them straight from the batch's bytes (see
// wireReader): a reservoir is most of a batch, and msgpack's DecodeUint64
// costs about 50 ns a value, most of DecodeBatch's time. Elsewhere it reads
// through d. Both accept and refuse the same inputs.
func (m *Micros) DecodeMsgpack(d *msgpack.Decoder) error {
	if r, ok := d.Buffered().(*wireReader); ok {
		return m.decodeWire(r)
	}
	n, err := decodeLen(d, "latencies", MaxReservoir)
	if err != nil || n < 0 {
		*m = nil
		return err
	}
	s := make(Micros, 0, n)
	for range n {
		v, err := d.DecodeUint64()
		if err != nil {
			return err
		}
		if v > MaxLatencyMicros {
			return fmt.Errorf("latency %d µs out of range", v)
		}
		s = append(s, uint32(v))
	}
	*m = s
	return nil
}

// decodeWire is DecodeMsgpack reading from the batch's bytes.
func (m *Micros) decodeWire(r *wireReader) error {
	n, err := r.arrayLen()
	if err != nil || n < 0 {
		*m = nil
		return err
	}
	if n > MaxReservoir {
		return fmt.Errorf("latencies: %d elements, at most %d", n, MaxReservoir)
	}
	s := make(Micros, 0, min(n, r.Len())) // each value takes a byte at least
	for len(s) < n {
		s = r.compactUints(s, n)
		if len(s) == n {
			break
		}
		v, err := r.uint()
		if err != nil {
			return err
		}
		if v > MaxLatencyMicros {
			return fmt.Errorf("latency %d µs out of range", v)
		}
		s = append(s, uint32(v))
	}
	*m = s
	return nil
}

// compactUints appends to s, up to n values, the run of latencies at r
// encoded as an encoder with compact integers writes them (fixint, uint8,
// uint16 or uint32), and stops at anything else for uint to read. A
// reservoir's values mostly share one size, so it reads runs of one code.
func (r *wireReader) compactUints(s Micros, n int) Micros {
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
				s, b = append(s, binary.BigEndian.Uint32(b[1:5])), b[5:]
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

// wireReader is the reader DecodeBatch hands msgpack: a byte slice, like
// bytes.Reader, whose unread bytes Micros.DecodeMsgpack can reach through
// msgpack.Decoder.Buffered. (msgpack reads through a reader that has
// ReadByte and UnreadByte as it is, without a buffer of its own.)
type wireReader struct {
	b   []byte
	off int
}

func (r *wireReader) Read(p []byte) (int, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.off:])
	r.off += n
	return n, nil
}

func (r *wireReader) ReadByte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	r.off++
	return r.b[r.off-1], nil
}

func (r *wireReader) UnreadByte() error {
	if r.off == 0 {
		return errors.New("messages: UnreadByte at the start")
	}
	r.off--
	return nil
}

// Len is the number of bytes not read yet.
func (r *wireReader) Len() int { return len(r.b) - r.off }

// next returns the next n bytes.
func (r *wireReader) next(n int) ([]byte, error) {
	if r.Len() < n {
		r.off = len(r.b)
		return nil, io.ErrUnexpectedEOF
	}
	r.off += n
	return r.b[r.off-n : r.off], nil
}

// arrayLen reads an array header as msgpack's DecodeArrayLen does: -1 for nil.
func (r *wireReader) arrayLen() (int, error) {
	c, err := r.ReadByte()
	switch {
	case err != nil:
		return 0, err
	case c == 0xc0: // nil
		return -1, nil
	case c >= 0x90 && c <= 0x9f: // fixarray
		return int(c & 0x0f), nil
	case c == 0xdc: // array 16
		b, err := r.next(2)
		if err != nil {
			return 0, err
		}
		return int(binary.BigEndian.Uint16(b)), nil
	case c == 0xdd: // array 32
		b, err := r.next(4)
		if err != nil {
			return 0, err
		}
		return int(binary.BigEndian.Uint32(b)), nil
	}
	return 0, fmt.Errorf("msgpack: invalid code=%x decoding array length", c)
}

// uint reads an integer as msgpack's DecodeUint64 does: nil is 0, and a
// negative number wraps around (the caller's range check refuses it).
func (r *wireReader) uint() (uint64, error) {
	c, err := r.ReadByte()
	if err != nil {
		return 0, err
	}
	if c <= 0x7f || c >= 0xe0 { // positive and negative fixint
		return uint64(int8(c)), nil
	}
	var size int
	switch c {
	case 0xc0: // nil
		return 0, nil
	case 0xcc, 0xd0: // uint8, int8
		size = 1
	case 0xcd, 0xd1: // uint16, int16
		size = 2
	case 0xce, 0xd2: // uint32, int32
		size = 4
	case 0xcf, 0xd3: // uint64, int64
		size = 8
	default:
		return 0, fmt.Errorf("msgpack: invalid code=%x decoding uint64", c)
	}
	b, err := r.next(size)
	if err != nil {
		return 0, err
	}
	return wireInt(c, b), nil
}

// wireInt is the integer of code c in b, big-endian, sign-extended for the
// signed codes.
func wireInt(c byte, b []byte) uint64 {
	switch c {
	case 0xcc:
		return uint64(b[0])
	case 0xd0:
		return uint64(int8(b[0]))
	case 0xcd:
		return uint64(binary.BigEndian.Uint16(b))
	case 0xd1:
		return uint64(int16(binary.BigEndian.Uint16(b)))
	case 0xce:
		return uint64(binary.BigEndian.Uint32(b))
	case 0xd2:
		return uint64(int32(binary.BigEndian.Uint32(b)))
	}
	return binary.BigEndian.Uint64(b)
}
