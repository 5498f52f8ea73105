package mailgen

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
)

// A large generated message is multipart/mixed (RFC 2046 §5.1.3): a text
// part of a few KiB and one attachment, base64 in lines of 76 characters
// (RFC 2045 §6.8), of random bytes so that it compresses as little as the
// photos and PDFs it stands for. The attachment's length is chosen so that
// the whole message is exactly its drawn size; the few bytes a base64 line
// cannot absorb go to the text part.

const (
	b64Line    = 76              // characters of a full base64 line
	b64RawLine = b64Line / 4 * 3 // raw bytes it encodes
)

// mixedMessage is head and a multipart body that makes the message size
// bytes.
func mixedMessage(r *rand.Rand, head []byte, size int) []byte {
	boundary := fmt.Sprintf("=_imapload_%016x", r.Uint64())
	i := r.IntN(len(attachExts))
	pre := fmt.Appendf(nil, "Content-Type: multipart/mixed; boundary=\"%s\"\r\n\r\n"+
		"This is a multi-part message in MIME format.\r\n\r\n--%s\r\n%s\r\n", boundary, boundary, textHeaders)
	mid := fmt.Appendf(nil, "--%s\r\nContent-Type: %s; name=\"%s.%s\"\r\n"+
		"Content-Disposition: attachment; filename=\"%s.%s\"\r\nContent-Transfer-Encoding: base64\r\n\r\n",
		boundary, attachTypes[i], pick(r, words), attachExts[i], pick(r, words), attachExts[i])
	tail := fmt.Appendf(nil, "--%s--\r\n", boundary)
	text := 512 + r.IntN(3<<10)
	enc, short := b64Length(size - len(head) - len(pre) - len(mid) - len(tail) - text)
	b := make([]byte, 0, size)
	b = append(append(b, head...), pre...)
	b = fillText(r, b, text+short)
	b = appendBase64(r, append(b, mid...), enc)
	return append(b, tail...)
}

// b64Length returns how many raw bytes a base64 body of at most budget
// bytes (full lines, then a shorter one, each ending CRLF) encodes, and
// how many bytes of the budget it leaves unused (0–5).
func b64Length(budget int) (raw, short int) {
	if budget <= 0 {
		return 0, max(budget, 0)
	}
	full, rest := budget/(b64Line+2), budget%(b64Line+2)
	raw = full * b64RawLine
	if last := (rest - 2) / 4 * 4; rest >= 6 {
		raw += last / 4 * 3
		rest -= last + 2
	}
	return raw, rest
}

// appendBase64 appends raw random bytes, base64 in lines of 76 characters
// ending CRLF.
func appendBase64(r *rand.Rand, b []byte, raw int) []byte {
	var in [b64RawLine]byte
	var out [b64Line]byte
	for raw > 0 {
		n := min(raw, b64RawLine)
		for j := 0; j < n; j += 8 {
			v := r.Uint64()
			for k := j; k < min(j+8, n); k++ {
				in[k], v = byte(v), v>>8
			}
		}
		base64.StdEncoding.Encode(out[:], in[:n])
		b = append(append(b, out[:base64.StdEncoding.EncodedLen(n)]...), "\r\n"...)
		raw -= n
	}
	return b
}
