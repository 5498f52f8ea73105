package wire

import (
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// A batch is mostly its phases, and msgpack's reflection spends about 5 µs on
// each (a sync.Map look-up and a reflect.Value per field): most of decoding a
// batch. DecodeStruct decodes a struct field by field instead, with the same
// msgpack primitives reflection ends up calling, so that it accepts and
// refuses exactly what reflection does (messages' FuzzPhaseDecoder compares
// the two).

// Fields is a struct that DecodeStruct decodes.
type Fields interface {
	// DecodeField reads field i of the struct's list of names.
	DecodeField(d *msgpack.Decoder, i int) error
	// Reset sets the struct to its zero value.
	Reset()
}

// errArrayStruct is msgpack's error for an array-encoded struct whose length
// is not the number of fields.
var errArrayStruct = errors.New("msgpack: number of fields in array-encoded struct has changed")

// DecodeStruct reads v, whose msgpack field names are names in order, as
// msgpack's decodeStructValue does: nil is the zero value; a map names
// fields (unknown names are skipped, a repeated one is read again); an array
// lists every field in order (empty: the zero value).
func DecodeStruct(d *msgpack.Decoder, v Fields, names []string) error {
	c, err := d.PeekCode()
	if err != nil {
		return err
	}
	switch {
	case c == 0xc0: // nil
		v.Reset()
		return d.DecodeNil()
	case c >= 0x80 && c <= 0x8f || c == 0xde || c == 0xdf: // map
		n, err := d.DecodeMapLen()
		if err != nil {
			return err
		}
		return decodeNamed(d, v, names, n)
	case c >= 0x90 && c <= 0x9f || c == 0xdc || c == 0xdd: // array
		n, err := d.DecodeArrayLen()
		switch {
		case err != nil:
			return err
		case n <= 0:
			v.Reset()
			return nil
		case n != len(names):
			return errArrayStruct
		}
		for i := range names {
			if err := v.DecodeField(d, i); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("msgpack: invalid code=%x decoding map length", c)
}

// decodeNamed reads n (name, value) pairs.
func decodeNamed(d *msgpack.Decoder, v Fields, names []string, n int) error {
	for range n {
		i, err := fieldIndex(d, names)
		if err != nil {
			return err
		}
		if i < 0 {
			err = d.Skip()
		} else {
			err = v.DecodeField(d, i)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// fieldIndex reads a field name (a string, bytes or nil, as msgpack's
// decodeStringTemp takes it) and returns its index in names, or -1.
func fieldIndex(d *msgpack.Decoder, names []string) (int, error) {
	n, err := d.DecodeBytesLen()
	if err != nil {
		return 0, err
	}
	key, err := readKey(d, max(n, 0))
	if err != nil || key == nil {
		return -1, err
	}
	for i, name := range names {
		if string(key) == name {
			return i, nil
		}
	}
	return -1, nil
}

// maxFieldName is at least the longest field name.
const maxFieldName = 16

// readKey reads the n bytes of a field name; nil when it is longer than any
// name (it is then skipped). Within a Reader it points into the input.
func readKey(d *msgpack.Decoder, n int) ([]byte, error) {
	if r, ok := d.Buffered().(*Reader); ok {
		key, err := r.next(n)
		if n > maxFieldName {
			key = nil
		}
		return key, err
	}
	buf := make([]byte, maxFieldName)
	if n <= len(buf) {
		return buf[:n], d.ReadFull(buf[:n])
	}
	for ; n > len(buf); n -= len(buf) { // a hostile length costs no memory
		if err := d.ReadFull(buf); err != nil {
			return nil, err
		}
	}
	return nil, d.ReadFull(buf[:n])
}

// IsNil reports whether the next value is nil, and if so reads it: msgpack
// sets a field whose type has its own decoder to the zero value on nil,
// without calling the decoder.
func IsNil(d *msgpack.Decoder) (bool, error) {
	c, err := d.PeekCode()
	if err != nil || c != 0xc0 {
		return false, nil // a read error shows again in the decoder
	}
	return true, d.DecodeNil()
}
