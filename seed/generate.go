package seed

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
)

// AttachmentFrom is the size from which a generated message is
// multipart/mixed with a base64 attachment; smaller ones are text/plain.
const AttachmentFrom = 32 << 10

// Shares of generated flags.
const (
	seenShare    = 0.85 // messages marked \Seen
	flaggedShare = 0.03 // messages marked \Flagged as well
)

// Generator writes RFC 5322 messages of the sizes its table draws. It is a
// pure function of its fields and the key: no I/O, safe for concurrent use.
type Generator struct {
	Sizes Sizes     // the size table
	Seed  uint64    // with the key, decides everything about a message
	Now   time.Time // dates are spread over the Days before Now
	Days  int       // how far back dates go, ≥ 1
}

var _ Source = (*Generator)(nil)

// Size returns the size of k's message without writing it.
func (g *Generator) Size(k Key) int { return g.Sizes.Draw(keyRand(g.Seed, k)) }

// Message returns k's message: its size drawn first, then headers, text
// and, from AttachmentFrom up, an attachment that makes it that size.
func (g *Generator) Message(k Key) (Message, error) {
	r := keyRand(g.Seed, k)
	size := g.Sizes.Draw(r)
	date := g.Now.Add(-time.Duration(r.Int64N(int64(max(g.Days, 1)) * int64(24*time.Hour))))
	m := Message{Date: date.Truncate(time.Second), Flags: drawFlags(r)}
	head := g.headers(r, k, m.Date)
	if size < AttachmentFrom {
		m.Body = textMessage(r, head, size)
	} else {
		m.Body = mixedMessage(r, head, size)
	}
	return m, nil
}

func drawFlags(r *rand.Rand) []imap.Flag {
	x := r.Float64()
	switch {
	case x < flaggedShare:
		return []imap.Flag{imap.FlagSeen, imap.FlagFlagged}
	case x < seenShare:
		return []imap.Flag{imap.FlagSeen}
	}
	return nil
}

// headers writes the headers every message has, up to but without the
// content headers.
func (g *Generator) headers(r *rand.Rand, k Key, date time.Time) []byte {
	first, last := pick(r, firstNames), pick(r, lastNames)
	to := k.Account
	if !strings.Contains(to, "@") {
		to += "@example.org"
	}
	b := make([]byte, 0, 512)
	b = fmt.Appendf(b, "Date: %s\r\n", date.Format(time.RFC1123Z))
	b = fmt.Appendf(b, "From: %s %s <%s.%s@%s>\r\n", first, last, strings.ToLower(first), strings.ToLower(last), pick(r, domains))
	b = fmt.Appendf(b, "To: %s <%s>\r\n", k.Account, to)
	b = fmt.Appendf(b, "Subject: %s\r\n", subject(r))
	b = fmt.Appendf(b, "Message-ID: <%016x.%d@seed.imapload.example>\r\n", r.Uint64(), k.Index)
	return append(b, "MIME-Version: 1.0\r\n"...)
}

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
