package producer

import "time"

// Reconnect backoff: exponential with full jitter, so that sessions dropped
// together (a server restart, a load balancer failover) come back spread out
// instead of in one synchronized wave.
const (
	backoffBase = 50 * time.Millisecond
	backoffCap  = 5 * time.Second
)

// backoff is the wait before reconnect attempt number attempt (0 for the
// first retry): u·min(cap, base·2^attempt), with u uniform in [0, 1).
func backoff(attempt int, base, cap time.Duration, u float64) time.Duration {
	ceiling := base
	for i := 0; i < attempt && ceiling < cap; i++ {
		ceiling *= 2
	}
	return time.Duration(u * float64(min(ceiling, cap)))
}
