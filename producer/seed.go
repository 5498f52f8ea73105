package producer

import (
	"hash/fnv"
	"math/rand/v2"
	"strconv"
)

// Every random choice of a producer (account order, arrivals, the mix, which
// message to fetch, jitter) comes from a PCG source seeded from Options.Seed
// and the producer id, so a test with a fixed Seed repeats itself, and
// producers sharing a Seed still differ.

// idSeed derives a producer's base seed from its id and Options.Seed.
func idSeed(id string, seed uint64) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64() ^ seed
}

// stepSeed derives a step's seed from the producer's, so each step of a run
// draws differently but repeatably.
func stepSeed(base uint64, run string, step int) uint64 {
	h := fnv.New64a()
	h.Write([]byte(run + "/" + strconv.Itoa(step)))
	return base ^ h.Sum64()
}

// newRand returns a source for one stream of choices of one seed.
func newRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}
