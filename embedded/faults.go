package embedded

import (
	"hash/fnv"
	"math/rand/v2"
	"sync"

	"github.com/emersion/go-imap/v2"
)

// dropSpread is the number of drop points a doomed connection picks from:
// right after the greeting, or at its 1st, 2nd or 3rd command.
const dropSpread = 4

// noDrop marks a connection that is never dropped on purpose.
const noDrop = -1

// errInjectedNo is the reply to a command picked by NoFraction.
var errInjectedNo = &imap.Error{
	Type: imap.StatusResponseTypeNo,
	Code: imap.ResponseCodeServerBug,
	Text: "injected fault",
}

// faults draws the fault-injection decisions from one seeded source, so
// a run with the same Seed and the same arrival order repeats.
type faults struct {
	dropFraction, noFraction float64
	refuseSelect, refuseList float64

	mu  sync.Mutex
	rng *rand.Rand
}

func newFaults(o *IMAPOptions) *faults {
	return &faults{
		dropFraction: o.DropFraction,
		noFraction:   o.NoFraction,
		refuseSelect: o.RefuseSelect,
		refuseList:   o.RefuseList,
		rng:          rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15)),
	}
}

// dropPoint decides the fate of a new connection: noDrop, 0 (after the
// greeting) or k (when its k-th command arrives).
func (f *faults) dropPoint() int {
	if f.dropFraction == 0 {
		return noDrop
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rng.Float64() >= f.dropFraction {
		return noDrop
	}
	return f.rng.IntN(dropSpread)
}

// injectNo reports whether this command gets the NO fault.
func (f *faults) injectNo() bool { return f.draw(f.noFraction) }

// draw reports whether a draw falls under fraction (never for 0, always
// for 1).
func (f *faults) draw(fraction float64) bool {
	if fraction == 0 {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rng.Float64() < fraction
}

// slowAccount reports whether user falls in the slow fraction: its FNV-1a
// hash, mixed and scaled to [0, 1), is below fraction. The choice never
// changes for a name, across runs and processes.
func slowAccount(user string, fraction float64) bool {
	if fraction == 0 {
		return false
	}
	h := fnv.New64a()
	h.Write([]byte(user))
	return float64(mix64(h.Sum64())>>11)/(1<<53) < fraction
}

// mix64 is MurmurHash3's 64-bit finalizer. FNV's high bits barely change
// between "user1" and "user2"; after mixing every bit depends on every
// input bit, so numbered names spread evenly.
func mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// IsSlow reports whether user's mailbox commands pay SlowDelay.
func (s *IMAP) IsSlow(user string) bool {
	return slowAccount(user, s.opts.SlowFraction)
}
