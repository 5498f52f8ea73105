package producer

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/imapload/imapload/messages"
)

// pacer yields the intended start of each command of a step, as an offset
// from the step start, independent of how the server answers (open loop). It
// is a pure function of its inputs: no clock, no sleeping.
//
// Constant arrivals put command i at i/rate. Poisson arrivals space commands
// by exponential gaps of mean 1/rate drawn from a seeded source, the arrivals
// of many independent users.
type pacer struct {
	rate    float64
	poisson bool
	rng     *rand.Rand
	i       uint64  // commands issued so far
	at      float64 // Poisson: the last arrival, seconds since the step start
}

func newPacer(rate float64, arrival string, seed uint64) *pacer {
	return &pacer{
		rate:    rate,
		poisson: arrival == messages.ArrivalPoisson,
		rng:     rand.New(rand.NewPCG(seed, 0x7061636572)),
	}
}

// constantAt is the intended start of command i at rate commands per second.
func constantAt(i uint64, rate float64) time.Duration {
	return seconds(float64(i) / rate)
}

// next returns the intended start of the next command.
func (p *pacer) next() time.Duration {
	i := p.i
	p.i++
	if !p.poisson {
		return constantAt(i, p.rate)
	}
	p.at += p.rng.ExpFloat64() / p.rate
	return seconds(p.at)
}

// seconds converts s seconds to a Duration, saturating instead of wrapping.
func seconds(s float64) time.Duration {
	ns := s * float64(time.Second)
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}

// constantCount is how many constant-spaced commands have an intended start
// in [from, to): the number of integers i with from ≤ i/rate < to.
func constantCount(rate float64, from, to time.Duration) uint64 {
	first := math.Ceil(from.Seconds() * rate)
	last := math.Ceil(to.Seconds() * rate)
	if last <= first {
		return 0
	}
	return uint64(last - first)
}
