package mailgen

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// ErrBadSizes is a size table that cannot be parsed or drawn from. It
// names no package: seed and the producer's callers show it in their own
// terms (seed wraps it as "seed: bad size table").
var ErrBadSizes = errors.New("bad size table")

// AttachmentFrom is the size from which a generated message is
// multipart/mixed with a base64 attachment; smaller ones are text/plain.
const AttachmentFrom = 32 << 10

// Headers writes the headers every generated message has, up to but
// without the content headers: Date, From (a drawn sender), To (account,
// at example.org unless it has a domain), Subject (drawn words),
// Message-ID (what id returns, drawn from r or not) and MIME-Version. The
// draws from r come in that order.
func Headers(r *rand.Rand, account string, date time.Time, id func(*rand.Rand) string) []byte {
	first, last := pick(r, firstNames), pick(r, lastNames)
	to := account
	if !strings.Contains(to, "@") {
		to += "@example.org"
	}
	b := make([]byte, 0, 512)
	b = fmt.Appendf(b, "Date: %s\r\n", date.Format(time.RFC1123Z))
	b = fmt.Appendf(b, "From: %s %s <%s.%s@%s>\r\n", first, last, strings.ToLower(first), strings.ToLower(last), pick(r, domains))
	b = fmt.Appendf(b, "To: %s <%s>\r\n", account, to)
	b = fmt.Appendf(b, "Subject: %s\r\n", subject(r))
	b = fmt.Appendf(b, "Message-ID: <%s>\r\n", id(r))
	return append(b, "MIME-Version: 1.0\r\n"...)
}

// Body appends to head the content headers and a body that make the
// message size bytes: text/plain below AttachmentFrom, multipart/mixed
// with a base64 attachment from it up (a little more than size when the
// headers alone exceed it).
func Body(r *rand.Rand, head []byte, size int) []byte {
	if size < AttachmentFrom {
		return textMessage(r, head, size)
	}
	return mixedMessage(r, head, size)
}

// MaxWeight bounds a weight of a size table (and seed's folder shares), so
// that their sum stays finite.
const MaxWeight = maxWeight

func pick(r *rand.Rand, list []string) string { return list[r.IntN(len(list))] }

// subject is 2 to 8 words, the first capitalised.
func subject(r *rand.Rand) string {
	n := 2 + r.IntN(7)
	ws := make([]string, n)
	for i := range ws {
		ws[i] = pick(r, words)
	}
	ws[0] = strings.ToUpper(ws[0][:1]) + ws[0][1:]
	return strings.Join(ws, " ")
}

const textHeaders = "Content-Type: text/plain; charset=us-ascii\r\nContent-Transfer-Encoding: 7bit\r\n"

// textMessage is head, text headers and a body of words that makes the
// message size bytes (or a little more when the headers alone exceed it).
func textMessage(r *rand.Rand, head []byte, size int) []byte {
	b := make([]byte, 0, size)
	b = append(append(append(b, head...), textHeaders...), "\r\n"...)
	return fillText(r, b, max(size-len(b), 2))
}

// fillText appends exactly n ≥ 2 bytes of words in lines of at most 72
// characters, ending with CRLF.
func fillText(r *rand.Rand, b []byte, n int) []byte {
	start, line := len(b), 0
	for len(b)-start < n {
		w := pick(r, words)
		switch {
		case line+1+len(w) > 72:
			b, line = append(b, "\r\n"...), 0
		case line > 0:
			b, line = append(b, ' '), line+1
		}
		b, line = append(b, w...), line+len(w)
	}
	b = b[:start+n-2]
	if len(b) > start && b[len(b)-1] == '\r' {
		b[len(b)-1] = '.'
	}
	return append(b, "\r\n"...)
}
