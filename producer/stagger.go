package producer

import (
	"hash/fnv"
	"math"
	"time"
)

// staggerOffset is when session k of n starts, as an offset into the stagger
// window: the producer's own offset (a hash of its id) plus k/n of the
// window, wrapped around. Each producer's sessions are spread evenly over the
// whole window, and different producers interleave instead of all starting
// their first session at once.
func staggerOffset(producerID string, k, n int, window time.Duration) time.Duration {
	if window <= 0 || n <= 0 {
		return 0
	}
	frac := math.Mod(idFraction(producerID)+float64(k)/float64(n), 1)
	return time.Duration(frac * float64(window))
}

// idFraction maps an id to [0, 1), stably across runs and hosts.
func idFraction(id string) float64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return float64(h.Sum64()>>11) / (1 << 53)
}
