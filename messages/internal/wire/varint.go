package wire

import enc "github.com/DataDog/sketches-go/ddsketch/encoding"

// The varints of sketches-go's encoding, decoded with a fast path for the
// one-byte ones that most bins are made of; each returns the value and its
// length, 0 when b is cut short.

// Uvarint decodes enc.EncodeUvarint64's encoding at the start of b. The
// one-byte case is small enough to be inlined.
func Uvarint(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return uvarintSlow(b)
}

func uvarintSlow(b []byte) (uint64, int) {
	rest := b
	v, err := enc.DecodeUvarint64(&rest)
	if err != nil {
		return 0, 0
	}
	return v, len(b) - len(rest)
}

// Varint decodes enc.EncodeVarint64's zig-zag encoding.
func Varint(b []byte) (int64, int) {
	u, k := Uvarint(b)
	return int64(u>>1) ^ -int64(u&1), k
}

// Varfloat decodes enc.EncodeVarfloat64's encoding. A first byte < 0x80 is
// the whole value, a small count, looked up in oneByteFloats.
func Varfloat(b []byte) (float64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return oneByteFloats[b[0]], 1
	}
	return varfloatSlow(b)
}

func varfloatSlow(b []byte) (float64, int) {
	rest := b
	v, err := enc.DecodeVarfloat64(&rest)
	if err != nil {
		return 0, 0
	}
	return v, len(b) - len(rest)
}

// oneByteFloats are the values of the one-byte varfloats.
var oneByteFloats = func() (t [0x80]float64) {
	for i := range t {
		b := []byte{byte(i)}
		t[i], _ = enc.DecodeVarfloat64(&b)
	}
	return t
}()
