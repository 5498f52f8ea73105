package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// MaxDepth bounds how deep containers nest in a checked value. A batch is
// five levels deep (batch, phases, phase, sample, values); the rest is
// headroom.
const MaxDepth = 16

var errTruncated = errors.New("truncated")

// Check walks the one msgpack value at the start of b without allocating
// and returns the bytes after it. It refuses what msgpack v5.4.1 pays for
// before it notices a problem: a header that claims more bytes or elements
// than remain (msgpack allocates up to 1 MiB for a 6-byte message claiming a
// 4 GiB string) and nesting deeper than MaxDepth (msgpack skips an unknown
// field recursively: 1 MiB of nested arrays took 128 MiB of stack and 0.8 s).
func Check(b []byte) (rest []byte, err error) { return check(b, 0) }

func check(b []byte, depth int) ([]byte, error) {
	if len(b) == 0 {
		return nil, errTruncated
	}
	c, b := b[0], b[1:]
	switch {
	case c <= 0x7f || c >= 0xe0: // positive and negative fixint
		return b, nil
	case c <= 0x8f: // fixmap
		return checkItems(b, 2*uint64(c&0x0f), depth)
	case c <= 0x9f: // fixarray
		return checkItems(b, uint64(c&0x0f), depth)
	case c <= 0xbf: // fixstr
		return skip(b, uint64(c&0x1f))
	}
	switch c {
	case 0xc0, 0xc2, 0xc3: // nil, false, true
		return b, nil
	case 0xcc, 0xd0: // uint8, int8
		return skip(b, 1)
	case 0xcd, 0xd1: // uint16, int16
		return skip(b, 2)
	case 0xca, 0xce, 0xd2: // float32, uint32, int32
		return skip(b, 4)
	case 0xcb, 0xcf, 0xd3: // float64, uint64, int64
		return skip(b, 8)
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16: type byte and data
		return skip(b, 1+1<<(c-0xd4))
	case 0xc4, 0xc5, 0xc6: // bin 8, 16, 32
		return skipBytes(b, 1<<(c-0xc4), 0)
	case 0xd9, 0xda, 0xdb: // str 8, 16, 32
		return skipBytes(b, 1<<(c-0xd9), 0)
	case 0xc7, 0xc8, 0xc9: // ext 8, 16, 32: length, type byte, data
		return skipBytes(b, 1<<(c-0xc7), 1)
	case 0xdc, 0xdd: // array 16, 32
		return checkContainer(b, 2<<(c-0xdc), 1, depth)
	case 0xde, 0xdf: // map 16, 32: a key and a value per entry
		return checkContainer(b, 2<<(c-0xde), 2, depth)
	}
	return nil, fmt.Errorf("msgpack code 0x%x is never used", c)
}

// skipBytes skips a length of size bytes, then extra plus that many bytes.
func skipBytes(b []byte, size int, extra uint64) ([]byte, error) {
	n, b, err := length(b, size)
	if err != nil {
		return nil, err
	}
	return skip(b, n+extra)
}

// checkContainer reads a length of size bytes and checks per values for each.
func checkContainer(b []byte, size int, per uint64, depth int) ([]byte, error) {
	n, b, err := length(b, size)
	if err != nil {
		return nil, err
	}
	return checkItems(b, per*n, depth)
}

// checkItems checks the n values of a container; each takes at least a byte.
func checkItems(b []byte, n uint64, depth int) ([]byte, error) {
	if n > uint64(len(b)) {
		return nil, fmt.Errorf("container claims %d values, %d bytes remain", n, len(b))
	}
	if n > 0 && depth >= MaxDepth {
		return nil, fmt.Errorf("containers nested deeper than %d", MaxDepth)
	}
	var err error
	for ; n > 0; n-- {
		switch { // fast paths for reservoir values: positive fixint and uint16
		case len(b) > 0 && b[0] <= 0x7f:
			b = b[1:]
			continue
		case len(b) >= 3 && b[0] == 0xcd:
			b = b[3:]
			continue
		}
		if b, err = check(b, depth+1); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// length reads a big-endian length of size bytes.
func length(b []byte, size int) (uint64, []byte, error) {
	if len(b) < size {
		return 0, nil, errTruncated
	}
	switch size {
	case 1:
		return uint64(b[0]), b[1:], nil
	case 2:
		return uint64(binary.BigEndian.Uint16(b)), b[2:], nil
	default:
		return uint64(binary.BigEndian.Uint32(b)), b[4:], nil
	}
}

func skip(b []byte, n uint64) ([]byte, error) {
	if n > uint64(len(b)) {
		return nil, fmt.Errorf("header claims %d bytes, %d remain", n, len(b))
	}
	return b[n:], nil
}
