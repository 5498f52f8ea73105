package producer

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Words for generated bodies: plain ASCII, so the message needs no transfer
// encoding and the server must hand back exactly these bytes.
var bodyWords = strings.Fields(`the quick brown fox jumps over a lazy dog while
imap servers store fetch append select list and logout messages for many users
at once under load with latency and throughput measured per phase`)

// newMessage builds a small RFC 5322 message (CRLF line ends, 7-bit ASCII) of
// roughly 1–2 KiB, unique by its Message-ID. It is a pure function of its
// arguments.
func newMessage(user, producer string, n uint64, now time.Time, rng *rand.Rand) []byte {
	var b strings.Builder
	id := fmt.Sprintf("%s.%d.%016x@imapload.invalid", producer, n, rng.Uint64())
	fmt.Fprintf(&b, "From: imapload <load@imapload.invalid>\r\n")
	fmt.Fprintf(&b, "To: <%s@imapload.invalid>\r\n", headerSafe(user))
	fmt.Fprintf(&b, "Subject: imapload message %d from %s\r\n", n, producer)
	fmt.Fprintf(&b, "Date: %s\r\n", now.UTC().Format(time.RFC1123Z))
	fmt.Fprintf(&b, "Message-ID: <%s>\r\n", id)
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n")
	lines := 12 + rng.IntN(16)
	for range lines {
		for w := range 10 {
			if w > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(bodyWords[rng.IntN(len(bodyWords))])
		}
		b.WriteString("\r\n")
	}
	return []byte(b.String())
}

// headerSafe keeps a user name from breaking the header it is put in.
func headerSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x21 || r > 0x7e || r == '<' || r == '>' || r == '@' {
			return '_'
		}
		return r
	}, s)
}
