package seed

import (
	"hash/fnv"
	"math/rand/v2"
	"time"

	"github.com/emersion/go-imap/v2"
)

// Key names one message of a seeded folder: the Index-th (from 0) message
// of Folder of Account. A folder that holds n messages gets the messages
// of keys n, n+1, … up to its target, so a resumed run appends what an
// uninterrupted one would have.
type Key struct {
	Account string
	Folder  string
	Index   int
}

// Message is one message to APPEND.
type Message struct {
	Body  []byte      // the RFC 5322 message, CRLF line endings
	Date  time.Time   // its INTERNALDATE; zero leaves it to the server
	Flags []imap.Flag // flags to set, e.g. \Seen
}

// Source supplies the message of a key. It must be safe for concurrent
// use, and return the same message for the same key.
type Source interface {
	Message(k Key) (Message, error)
}

// keyRand returns the random source of one message: seeded from seed and
// the folder of the key, with the index as the stream, so that every
// message draws independently of the others.
func keyRand(seed uint64, k Key) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(k.Account))
	h.Write([]byte{0})
	h.Write([]byte(k.Folder))
	return rand.New(rand.NewPCG(seed^h.Sum64(), uint64(k.Index)))
}
