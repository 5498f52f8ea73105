package aggregator

import (
	"fmt"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// fallacySpread is how far apart the per-producer P99s of a phase must be
// (largest over smallest) for the result to quantify the average-of-P99s
// fallacy: when they agree, their average is harmless.
const fallacySpread = 2.0

// producerFigures are one producer's response-time P99s, ms, with the number
// of latencies each stands on: per phase, and over its scheduled phases.
type producerFigures struct {
	phaseP99, phaseCount         [messages.NumPhases]float64
	scheduledP99, scheduledCount float64
}

// producerFigures reads each producer's response-time P99s: per phase from
// its bins, and over its scheduled phases from their sum.
func (p *Pool) producerFigures(ids []string) []producerFigures {
	out := make([]producerFigures, len(ids))
	var sched messages.SketchSum
	for i, id := range ids {
		f := &out[i]
		sched.Reset()
		for ph := range p.prods[id].response {
			bins := &p.prods[id].response[ph]
			f.phaseP99[ph], f.phaseCount[ph] = bins.Quantile(0.99)/1000, bins.Count()
			if messages.Phase(ph).Scheduled() {
				sched.Add(bins)
			}
		}
		f.scheduledP99, f.scheduledCount = sched.Quantile(0.99)/1000, sched.Count()
	}
	return out
}

// breakdown shows every producer beside the pool: its count and share, its
// P99 over the scheduled phases (its sketches merged, never averaged), its
// share of the errors, and whether it departs from the pool. It also returns,
// per phase, how far the average of per-producer P99s is from the pooled P99.
func (p *Pool) breakdown(pooled [messages.NumPhases]*ddsketch.DDSketch) ([]messages.ProducerBreakdown, map[string]float64) {
	var totalErrors uint64
	for _, pa := range p.prods {
		totalErrors += pa.errors
	}
	poolP99 := sketchQuantile(mergeAll(scheduled(pooled)...), 0.99)
	ids := p.producerIDs()
	figures := p.producerFigures(ids)
	out := make([]messages.ProducerBreakdown, 0, len(ids))
	for i, id := range ids {
		pa := p.prods[id]
		b := breakdownOf(id, pa)
		b.P99 = figures[i].scheduledP99
		if p.totals.completed > 0 {
			b.Share = float64(pa.completed) / float64(p.totals.completed)
		}
		if totalErrors > 0 {
			b.ErrorShare = float64(pa.errors) / float64(totalErrors)
		}
		b.Reason = p.deviance(figures[i].scheduledCount, b.P99, poolP99)
		b.Deviant = b.Reason != ""
		out = append(out, b)
	}
	return out, fallacy(figures, pooled)
}

// breakdownOf is a producer's counts and health; when it fell behind, the
// health is that of its lagging batches, which names the cause. A stop
// (SIGSTOP) seen in any batch counts: the SIGCONT may be counted only at the
// cut after the one that shows the lag, when the lag has already passed.
func breakdownOf(id string, pa *producerAcc) messages.ProducerBreakdown {
	h := pa.health
	if pa.saturated {
		h = pa.lagging
		h.Stopped, h.Local = pa.health.Stopped, pa.health.Local
	}
	b := messages.ProducerBreakdown{
		Producer: id, Count: pa.completed, Saturated: pa.saturated, Rate: pa.rate,
		LagP99: float64(h.LagP99) / 1000, CPU: h.CPU, CPULimit: h.CPULimit,
		RunDelay: h.RunDelay, Pressure: h.Pressure, Throttled: h.Throttled, Stopped: h.Stopped,
		Local: h.Local,
	}
	if pa.saturated {
		b.LagCause = verdict.LagCause(h)
	}
	return b
}

// scheduled picks the sketches of the scheduled phases (not dial or login).
func scheduled(s [messages.NumPhases]*ddsketch.DDSketch) []*ddsketch.DDSketch {
	var out []*ddsketch.DDSketch
	for ph, sk := range s {
		if messages.Phase(ph).Scheduled() {
			out = append(out, sk)
		}
	}
	return out
}

// deviance says how a producer's P99 departs from the pool's, or "" when it
// does not (or has too few latencies for its P99 to mean anything).
func (p *Pool) deviance(count, p99, poolP99 float64) string {
	ratio := p.opts.deviantRatio()
	if count < float64(p.opts.deviantMinCount()) || poolP99 <= 0 {
		return ""
	}
	if r := p99 / poolP99; r > ratio || r < 1/ratio {
		return fmt.Sprintf("p99 %.3g ms is %.2g× the pooled %.3g ms", p99, r, poolP99)
	}
	return ""
}

// fallacy returns, per phase whose per-producer P99s differ by more than
// fallacySpread, (mean of per-producer P99s − pooled P99) / pooled P99; nil
// when no phase qualifies.
func fallacy(figures []producerFigures, pooled [messages.NumPhases]*ddsketch.DDSketch) map[string]float64 {
	var out map[string]float64
	for ph := range pooled {
		pool := sketchQuantile(pooled[ph], 0.99)
		if pool <= 0 {
			continue
		}
		var sum, lo, hi float64
		n := 0
		for _, f := range figures {
			if f.phaseCount[ph] == 0 {
				continue
			}
			v := f.phaseP99[ph]
			if n == 0 || v < lo {
				lo = v
			}
			hi = max(hi, v)
			sum += v
			n++
		}
		if n < 2 || !(hi > fallacySpread*lo) {
			continue
		}
		if out == nil {
			out = map[string]float64{}
		}
		out[messages.Phase(ph).String()] = (sum/float64(n) - pool) / pool
	}
	return out
}
