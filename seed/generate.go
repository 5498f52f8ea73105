package seed

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/imapload/imapload/internal/mailgen"
)

// AttachmentFrom is the size from which a generated message is
// multipart/mixed with a base64 attachment; smaller ones are text/plain.
const AttachmentFrom = mailgen.AttachmentFrom

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
	m.Body = mailgen.Body(r, head, size)
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

// headers writes the headers every message has (see mailgen.Headers),
// with seed's Message-ID.
func (g *Generator) headers(r *rand.Rand, k Key, date time.Time) []byte {
	return mailgen.Headers(r, k.Account, date, func(r *rand.Rand) string {
		return fmt.Sprintf("%016x.%d@seed.imapload.example", r.Uint64(), k.Index)
	})
}
