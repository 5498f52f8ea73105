package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/vmihailenco/msgpack/v5"
)

// Reader is a byte slice to hand msgpack, like bytes.Reader, whose unread
// bytes the decoders here reach through msgpack.Decoder.Buffered: they then
// read names and integers in place instead of through msgpack's calls.
// (msgpack reads through a reader that has ReadByte and UnreadByte as it
// is, without a buffer of its own.)
type Reader struct {
	b   []byte
	off int
}

// NewReader returns a Reader of b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

func (r *Reader) Read(p []byte) (int, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.off:])
	r.off += n
	return n, nil
}

// ReadByte implements io.ByteReader.
func (r *Reader) ReadByte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	r.off++
	return r.b[r.off-1], nil
}

// UnreadByte implements io.ByteScanner.
func (r *Reader) UnreadByte() error {
	if r.off == 0 {
		return errors.New("wire: UnreadByte at the start")
	}
	r.off--
	return nil
}

// Len is the number of bytes not read yet.
func (r *Reader) Len() int { return len(r.b) - r.off }

// next returns the next n bytes, in place.
func (r *Reader) next(n int) ([]byte, error) {
	if r.Len() < n {
		r.off = len(r.b)
		return nil, io.ErrUnexpectedEOF
	}
	r.off += n
	return r.b[r.off-n : r.off], nil
}

// source is what the decoders here read from: a Reader, or any other reader
// msgpack decodes from (a stream).
type source interface {
	ReadByte() (byte, error)
	// next returns the next n bytes, valid until the next call.
	next(n int) ([]byte, error)
	// Len is at most the number of bytes left (a stream says few).
	Len() int
}

// sourceOf returns the reader d decodes from, as a source.
func sourceOf(d *msgpack.Decoder) source {
	switch r := d.Buffered().(type) {
	case *Reader:
		return r
	case interface {
		io.Reader
		io.ByteReader
	}: // msgpack wraps any other reader in a bufio.Reader
		return &stream{r: r}
	}
	return &stream{r: &byteReader{d.Buffered()}}
}

// stream reads from a reader that msgpack decodes from.
type stream struct {
	r interface {
		io.Reader
		io.ByteReader
	}
	buf [16]byte
}

func (s *stream) ReadByte() (byte, error) { return s.r.ReadByte() }

func (s *stream) next(n int) ([]byte, error) {
	b := s.buf[:0]
	if n > len(s.buf) {
		b = make([]byte, 0, n) // the callers bound n
	}
	b = b[:n]
	_, err := io.ReadFull(s.r, b)
	return b, err
}

// Len is what a stream's slice may pre-allocate: a few values.
func (s *stream) Len() int { return 256 }

// byteReader reads one byte at a time (msgpack never hands out such a reader).
type byteReader struct{ io.Reader }

func (b *byteReader) ReadByte() (byte, error) {
	var c [1]byte
	_, err := io.ReadFull(b, c[:])
	return c[0], err
}

// arrayLen reads an array header as msgpack's DecodeArrayLen does: -1 for nil.
func arrayLen(r source) (int, error) {
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

// readUint reads an integer as msgpack's DecodeUint64 does: nil is 0, and a
// negative number wraps around (the caller's range check refuses it).
func readUint(r source) (uint64, error) {
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
	return intOf(c, b), nil
}

// intOf is the integer of code c in b, big-endian, sign-extended for the
// signed codes.
func intOf(c byte, b []byte) uint64 {
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
