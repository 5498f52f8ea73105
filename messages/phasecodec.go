package messages

import (
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// A batch is mostly its phases, and msgpack's reflection spends about 5 µs on
// each (a sync.Map look-up and a reflect.Value per field): most of
// DecodeBatch. PhaseStats and Sample are therefore decoded field by field
// here, with the same msgpack primitives reflection ends up calling, so that
// they accept and refuse exactly what it does (FuzzPhaseDecoder compares the
// two).

// fieldDecoder is a struct decoded by decodeStruct.
type fieldDecoder interface {
	// decodeField reads field i of the struct's field list.
	decodeField(d *msgpack.Decoder, i int) error
	// reset sets the struct to its zero value.
	reset()
}

// phaseFields and sampleFields are the msgpack names of PhaseStats' and
// Sample's fields, in order.
var (
	phaseFields  = []string{"phase", "attempted", "succeeded", "dropped", "response", "service", "tls", "errors"}
	sampleFields = []string{"count", "values", "sketch"}
)

// errArrayStruct is msgpack's error for an array-encoded struct whose length
// is not the number of fields.
var errArrayStruct = errors.New("msgpack: number of fields in array-encoded struct has changed")

// decodeStruct reads v as msgpack's decodeStructValue does: nil is the zero
// value; a map names fields (unknown names are skipped, a repeated one is
// read again); an array lists every field in order (empty: the zero value).
func decodeStruct(d *msgpack.Decoder, v fieldDecoder, names []string) error {
	c, err := d.PeekCode()
	if err != nil {
		return err
	}
	switch {
	case c == 0xc0: // nil
		v.reset()
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
			v.reset()
			return nil
		case n != len(names):
			return errArrayStruct
		}
		for i := range names {
			if err := v.decodeField(d, i); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("msgpack: invalid code=%x decoding map length", c)
}

// decodeNamed reads n (name, value) pairs.
func decodeNamed(d *msgpack.Decoder, v fieldDecoder, names []string, n int) error {
	for range n {
		i, err := fieldIndex(d, names)
		if err != nil {
			return err
		}
		if i < 0 {
			err = d.Skip()
		} else {
			err = v.decodeField(d, i)
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

// readKey reads the n bytes of a field name; nil when it is longer than any
// name (it is then skipped). Within DecodeBatch it points into the batch.
func readKey(d *msgpack.Decoder, n int) ([]byte, error) {
	if r, ok := d.Buffered().(*wireReader); ok {
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

// maxFieldName is at least the longest field name.
const maxFieldName = 16

// isNil reports whether the next value is nil, and if so reads it: msgpack
// sets a field whose type has its own decoder to the zero value on nil,
// without calling the decoder.
func isNil(d *msgpack.Decoder) (bool, error) {
	c, err := d.PeekCode()
	if err != nil || c != 0xc0 {
		return false, nil // a read error shows again in the decoder
	}
	return true, d.DecodeNil()
}

func (p *PhaseStats) reset() { *p = PhaseStats{} }

func (p *PhaseStats) decodeField(d *msgpack.Decoder, i int) error {
	var err error
	switch i {
	case 0:
		var null bool
		if null, err = isNil(d); null || err != nil {
			p.Phase = 0
			return err
		}
		return decodePhase(d, &p.Phase)
	case 1:
		p.Attempted, err = d.DecodeUint64()
	case 2:
		p.Succeeded, err = d.DecodeUint64()
	case 3:
		p.Dropped, err = d.DecodeUint64()
	case 4:
		return decodeStruct(d, &p.Response, sampleFields)
	case 5:
		return decodeStruct(d, &p.Service, sampleFields)
	case 6:
		return decodeStruct(d, &p.TLS, sampleFields)
	case 7:
		var null bool
		if null, err = isNil(d); null || err != nil {
			p.Errors = nil
			return err
		}
		return p.Errors.DecodeMsgpack(d)
	}
	return err
}

// decodePhase is Phase.DecodeMsgpack without its three allocations when it
// reads from DecodeBatch's wireReader.
func decodePhase(d *msgpack.Decoder, p *Phase) error {
	r, ok := d.Buffered().(*wireReader)
	if !ok {
		return p.DecodeMsgpack(d)
	}
	n, err := d.DecodeBytesLen() // what DecodeString takes: a string, bytes or nil
	if err != nil {
		return err
	}
	if n > maxPhaseName {
		return fmt.Errorf("string of %d bytes, at most %d", n, maxPhaseName)
	}
	name, err := r.next(max(n, 0))
	if err != nil {
		return err
	}
	for i, pn := range phaseNames {
		if string(name) == pn {
			*p = Phase(i)
			return nil
		}
	}
	return p.UnmarshalText(name) // for its error
}

// maxPhaseName is the bound Phase.DecodeMsgpack puts on a phase name.
const maxPhaseName = 16

func (s *Sample) reset() { *s = Sample{} }

func (s *Sample) decodeField(d *msgpack.Decoder, i int) error {
	var err error
	switch i {
	case 0:
		s.Count, err = d.DecodeUint64()
		return err
	case 1:
		var null bool
		if null, err = isNil(d); null || err != nil {
			s.Values = nil
			return err
		}
		return s.Values.DecodeMsgpack(d)
	}
	var null bool
	if null, err = isNil(d); null || err != nil {
		s.Sketch = nil
		return err
	}
	return s.Sketch.DecodeMsgpack(d)
}
