package aggregator

import "github.com/imapload/imapload/messages"

// demand counts the scheduled commands of a phase that the response-time
// percentiles are over: those served (with a latency) and those the
// generator never sent, which stand for an unbounded response time. Failed
// commands are in neither: they are counted as errors.
//
// At overload most commands may be dropped because no session was free.
// Leaving them out would make the percentiles describe only the lucky
// commands: the P99 would level off at the queue delay while the users who
// were never served vanished from the picture.
type demand struct {
	served, dropped uint64
}

// total is N, every command the percentiles are over.
func (d demand) total() uint64 { return d.served + d.dropped }

// neverSent is the share of N never sent (0 when none was).
func (d demand) neverSent() float64 {
	if d.dropped == 0 {
		return 0
	}
	return float64(d.dropped) / float64(d.total())
}

// servedQuantile maps the q-quantile over all N commands to a quantile over
// the served ones alone: q·N/Count. ok is false when q·N > Count, the rank
// falling among the commands never sent: the percentile is then only known
// to exceed the largest served response time. With nothing dropped, q is
// returned unchanged.
func (d demand) servedQuantile(q float64) (qs float64, ok bool) {
	if d.dropped == 0 {
		return q, true
	}
	n, c := float64(d.total()), float64(d.served)
	if q*n > c {
		return 0, false
	}
	return min(q*n/c, 1), true
}

// percentiles reads the four percentiles with at (ms at a quantile of the
// served commands, by the definition of the sketch or sample it reads),
// rescaled by servedQuantile. A percentile whose rank falls among the
// commands never sent reads as largest, the largest served response time,
// and is named in above.
func (d demand) percentiles(at func(q float64) float64, largest float64) (p messages.Percentiles, above []string) {
	var v [4]float64
	for i, q := range quantiles {
		qs, ok := d.servedQuantile(q)
		if !ok {
			v[i], above = largest, append(above, percentileNames[i])
			continue
		}
		v[i] = at(qs)
	}
	return messages.Percentiles{P50: v[0], P90: v[1], P99: v[2], P999: v[3], Max: largest}, above
}
