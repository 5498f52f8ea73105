package messages

import (
	"maps"
	"math"
	"slices"
	"strconv"
)

// What is published is rounded so that a person reading the JSON (with
// `nats sub`) sees figures, not float noise: latencies to 3 significant
// digits, rates to 0.1 command/s, shares and CPU figures to 4 significant
// digits. Ratios are kept whole: a step's verdict is judged again by its
// readers at their own threshold, and a rounded ratio could land on the
// other side of it. Counts are integers already.

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
	return Percentiles{P50: sig(p.P50, 3), P90: sig(p.P90, 3), P99: sig(p.P99, 3), P999: sig(p.P999, 3), Max: sig(p.Max, 3)}
}

// rounded widens nothing and narrows nothing by more than the rounding: each
// bound is rounded on its own to 3 significant digits.
func (iv Interval) rounded() Interval { return Interval{sig(iv[0], 3), sig(iv[1], 3)} }

func (b ProducerBreakdown) rounded() ProducerBreakdown {
	b.Share, b.ErrorShare, b.P99, b.LagP99 = sig(b.Share, 4), sig(b.ErrorShare, 4), sig(b.P99, 3), sig(b.LagP99, 3)
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

// tenth rounds a rate to 0.1.
func tenth(v float64) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	return math.Round(v*10) / 10
}
