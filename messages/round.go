package messages

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// What is published is rounded so that a person reading the JSON (with
// `nats sub`) sees figures, not float noise, and so that what is published
// is what was computed (docs/intervals.md):
//   - latencies to LatencyDigits significant digits, far finer than the
//     sketch's 0.5% accuracy, so the rounding adds no error a reader could
//     see (3 digits, the table's, can add 0.5% of their own);
//   - an interval's ends outward at the same digits, the lower one down and
//     the upper one up, so the published interval holds the computed one:
//     rounding ends to the nearest digit can narrow an interval, or shrink a
//     narrow one to a point, and lose its coverage;
//   - rates to 0.1 command/s, shares and CPU figures to 4 significant digits.
//
// Ratios are kept whole: a step's verdict is judged again by its readers at
// their own threshold, and a rounded ratio could land on the other side of
// it. Counts are integers already. Rounding for people, 3 digits, happens
// only where people read: the table, the summary, the HTML.

// LatencyDigits is how many significant digits published latencies keep.
const LatencyDigits = 6

// Rounded returns r rounded for publishing. It shares nothing mutable with r.
func (r StepResult) Rounded() StepResult {
	r.TargetRate, r.DeliveredRate, r.OfferedRate = tenth(r.TargetRate), tenth(r.DeliveredRate), tenth(r.OfferedRate)
	r.SessionRate, r.TargetSessionRate = tenth(r.SessionRate), tenth(r.TargetSessionRate)
	r.Phases = roundPhases(r.Phases)
	r.PerProducer = slices.Clone(r.PerProducer)
	for i := range r.PerProducer {
		r.PerProducer[i] = r.PerProducer[i].rounded()
	}
	r.AverageP99Fallacy = maps.Clone(r.AverageP99Fallacy)
	for k, v := range r.AverageP99Fallacy {
		r.AverageP99Fallacy[k] = sig(v, 4)
	}
	r.Health.LagP99Max, r.Health.CPUMax = sig(r.Health.LagP99Max, 3), sig(r.Health.CPUMax, 4)
	if r.Connections != nil {
		c := *r.Connections
		r.Connections = &c
	}
	r.Server = r.Server.Rounded()
	return r
}

// Rounded returns rep with every step, the knee and the last held step
// rounded for publishing.
func (rep RunReport) Rounded() RunReport {
	rep.Steps = slices.Clone(rep.Steps)
	for i := range rep.Steps {
		rep.Steps[i] = rep.Steps[i].Rounded()
	}
	if rep.Knee != nil {
		k := *rep.Knee
		k.Rate, k.DeliveredRate, k.Low = tenth(k.Rate), tenth(k.DeliveredRate), tenth(k.Low)
		rep.Knee = &k
	}
	if rep.LastHeld != nil {
		h := *rep.LastHeld
		h.Rate, h.DeliveredRate = tenth(h.Rate), tenth(h.DeliveredRate)
		rep.LastHeld = &h
	}
	if rep.MostHeld != nil {
		h := *rep.MostHeld
		h.Rate = tenth(h.Rate)
		rep.MostHeld = &h
	}
	return rep
}

func roundPhases(in map[string]PhaseResult) map[string]PhaseResult {
	if in == nil {
		return nil
	}
	out := make(map[string]PhaseResult, len(in))
	for name, p := range in {
		p.Percentiles, p.Sample, p.Service = p.Percentiles.rounded(), p.Sample.rounded(), p.Service.rounded()
		p.CI = Intervals{P50: p.CI.P50.rounded(), P90: p.CI.P90.rounded(), P99: p.CI.P99.rounded(), P999: p.CI.P999.rounded()}
		p.NeverSent = sig(p.NeverSent, 4)
		if p.TLS != nil {
			tls := p.TLS.rounded()
			p.TLS = &tls
		}
		if p.Bimodal != nil {
			b := *p.Bimodal
			b.LowMode, b.HighMode = sig(b.LowMode, 3), sig(b.HighMode, 3)
			b.LowShare, b.HighShare, b.Separation = sig(b.LowShare, 4), sig(b.HighShare, 4), sig(b.Separation, 3)
			p.Bimodal = &b
		}
		out[name] = p
	}
	return out
}

func (p Percentiles) rounded() Percentiles {
	const n = LatencyDigits
	return Percentiles{P50: sig(p.P50, n), P90: sig(p.P90, n), P99: sig(p.P99, n), P999: sig(p.P999, n), Max: sig(p.Max, n)}
}

// rounded rounds the interval outward: the lower end down, the upper end up,
// to LatencyDigits significant digits. It narrows nothing, and since rounding
// is monotone, an estimate inside the interval stays inside it once both
// are rounded.
func (iv Interval) rounded() Interval {
	return Interval{sigDown(iv[0], LatencyDigits), sigUp(iv[1], LatencyDigits)}
}

func (b ProducerBreakdown) rounded() ProducerBreakdown {
	b.Share, b.ErrorShare, b.P99, b.LagP99 = sig(b.Share, 4), sig(b.ErrorShare, 4), sig(b.P99, LatencyDigits), sig(b.LagP99, 3)
	b.Rate, b.CPU, b.CPULimit = tenth(b.Rate), sig(b.CPU, 4), sig(b.CPULimit, 4)
	b.RunDelay, b.Pressure, b.Throttled = sig(b.RunDelay, 4), sig(b.Pressure, 4), sig(b.Throttled, 4)
	return b
}

// sig rounds v to n significant digits; 0, infinities and NaN stay as they are.
func sig(v float64, n int) float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', n, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// sigDown is the largest float64 at or below v with n significant digits;
// 0, infinities and NaN stay as they are.
func sigDown(v float64, n int) float64 { return sigToward(v, n, -1) }

// sigUp is the smallest float64 at or above v with n significant digits;
// 0, infinities and NaN stay as they are.
func sigUp(v float64, n int) float64 { return sigToward(v, n, 1) }

// sigToward rounds v to n significant digits in direction dir (−1 down,
// +1 up). It rounds to the nearest first, and when that went the wrong way
// steps the last digit once: the decimal is then on the right side of v,
// and so is the float64 nearest it, v being a float64 itself.
func sigToward(v float64, n int, dir int) float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	r := sig(v, n)
	if r == v || (r < v) == (dir < 0) {
		return r
	}
	s := strconv.FormatFloat(v, 'e', n-1, 64) // d.ddddde±x
	mant, exp, _ := strings.Cut(s, "e")
	digits, err := strconv.ParseInt(strings.Replace(mant, ".", "", 1), 10, 64)
	e, err2 := strconv.Atoi(exp)
	if err != nil || err2 != nil {
		return v
	}
	out, err := strconv.ParseFloat(strconv.FormatInt(digits+int64(dir), 10)+"e"+strconv.Itoa(e-n+1), 64)
	if err != nil {
		return v
	}
	return out
}

// tenth rounds a rate to 0.1.
func tenth(v float64) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	return math.Round(v*10) / 10
}
