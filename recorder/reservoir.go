package recorder

import "math/rand/v2"

// reservoir is a uniform random sample of at most cap(values) of the values
// offered to it (Vitter's Algorithm R), with the exact number offered.
type reservoir struct {
	values []uint32
	seen   uint64
}

func newReservoir(capacity int) reservoir {
	return reservoir{values: make([]uint32, 0, capacity)}
}

// add offers v. Every value offered so far is in the sample with the same
// probability len(values)/seen.
func (r *reservoir) add(v uint32, rng *rand.Rand) {
	r.seen++
	if len(r.values) < cap(r.values) {
		r.values = append(r.values, v)
		return
	}
	if j := rng.Uint64N(r.seen); j < uint64(len(r.values)) {
		r.values[j] = v
	}
}

// take returns a copy of the sample and the count it was drawn from, and empties r.
func (r *reservoir) take() ([]uint32, uint64) {
	if r.seen == 0 {
		return nil, 0
	}
	out := append([]uint32(nil), r.values...)
	n := r.seen
	r.values, r.seen = r.values[:0], 0
	return out, n
}
