package aggregator

import (
	"slices"

	"github.com/imapload/imapload/messages"
)

// A percentile's rank is resolved when at least one of the N values is
// expected above it, N·(1−q) ≥ 1: P99 from 100 values, P99.9 from 1,000.
// Below that the q-quantile lies past all but a fraction of one value: the
// sample's largest value is all the sample says of it, and a figure read off
// the sketch between its two largest values would look like a measurement
// below the maximum. Such a percentile reads as Max and is named in
// Unresolved (shown "too few"); it is always in TooFew as well, since a
// two-sided interval needs several times more values.

// unresolved are the names of the percentiles whose rank n values cannot
// resolve, those already in above aside (their value is a lower bound
// for another reason: their rank falls among commands never sent).
func unresolved(n uint64, above []string) []string {
	var out []string
	for i, q := range quantiles {
		if n > 0 && float64(n)*(1-q) < 1 && !slices.Contains(above, percentileNames[i]) {
			out = append(out, percentileNames[i])
		}
	}
	return out
}

// atMax sets the percentiles named in names to p.Max.
func atMax(p messages.Percentiles, names []string) messages.Percentiles {
	v := [4]*float64{&p.P50, &p.P90, &p.P99, &p.P999}
	for i, name := range percentileNames {
		if slices.Contains(names, name) {
			*v[i] = p.Max
		}
	}
	return p
}

// holding widens each interval of ci just enough to hold its own estimate
// in p. The ends are order statistics read off the sketch and the estimate
// is the sketch's own reading at rank q·(N−1); they can disagree by under
// one sketch bin, and an estimate outside its own interval reads as a
// contradiction. Widening only adds coverage. Empty intervals (no value)
// stay empty.
func holding(ci messages.Intervals, p messages.Percentiles) messages.Intervals {
	hold := func(iv messages.Interval, v float64) messages.Interval {
		if iv == (messages.Interval{}) {
			return iv
		}
		return messages.Interval{min(iv[0], v), max(iv[1], v)}
	}
	return messages.Intervals{P50: hold(ci.P50, p.P50), P90: hold(ci.P90, p.P90), P99: hold(ci.P99, p.P99), P999: hold(ci.P999, p.P999)}
}
