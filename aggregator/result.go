package aggregator

import (
	"sort"
	"time"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/imapload/imapload/messages"
)

// Result derives the step's result from everything added so far. It leaves
// Generated zero: the publisher stamps it. Missing lists the producers that
// sent something but no final batch; Complete is true when there are none.
// Calling Result again, before or after more Adds, is fine.
func (p *Pool) Result() messages.StepResult {
	t := p.totals
	r := messages.StepResult{
		Kind: messages.KindStepResult, Run: p.run, Step: p.step,
		TargetRate: p.info.FleetRate, Duration: messages.Duration(p.info.Duration),
		Scheduled: t.scheduled, Succeeded: t.completed, Dropped: t.dropped,
		Attempted: t.scheduled - min(t.dropped, t.scheduled),
		Batches:   t.batches, Duplicates: t.duplicates, Corrupt: t.corrupt, Lost: t.lost,
	}
	if secs := time.Duration(p.info.Duration).Seconds(); secs > 0 {
		r.DeliveredRate = float64(t.completed) / secs
	}
	if r.TargetRate > 0 {
		r.Ratio = r.DeliveredRate / r.TargetRate
	}
	r.Producers, r.Missing = p.roster()
	r.Complete = len(r.Missing) == 0
	pooled := p.pooledResponses()
	r.Phases = p.phaseResults(pooled)
	r.Errors = p.errorGroups()
	r.PerProducer, r.AverageP99Fallacy = p.breakdown(pooled)
	r.Health = p.health()
	r.GeneratorSaturated = len(r.Health.SaturatedProducers) > 0
	return r
}

// roster lists every producer that sent a batch, and those without a final one.
func (p *Pool) roster() (all, missing []string) {
	all = p.producerIDs()
	for _, id := range all {
		if !p.prods[id].final {
			missing = append(missing, id)
		}
	}
	return all, missing
}

func (p *Pool) producerIDs() []string {
	ids := make([]string, 0, len(p.prods))
	for id := range p.prods {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// pooledResponses merges every producer's response sketches, per phase.
func (p *Pool) pooledResponses() [messages.NumPhases]*ddsketch.DDSketch {
	var out [messages.NumPhases]*ddsketch.DDSketch
	ids := p.producerIDs()
	for ph := range out {
		srcs := make([]*ddsketch.DDSketch, len(ids))
		for i, id := range ids {
			srcs[i] = p.prods[id].response[ph]
		}
		out[ph] = mergeAll(srcs...)
	}
	return out
}

func (p *Pool) phaseResults(pooled [messages.NumPhases]*ddsketch.DDSketch) map[string]messages.PhaseResult {
	out := map[string]messages.PhaseResult{}
	for ph := range p.phases {
		a := &p.phases[ph]
		if a.present {
			out[messages.Phase(ph).String()] = p.phaseResult(a, pooled[ph])
		}
	}
	return out
}

func (p *Pool) phaseResult(a *phaseAcc, resp *ddsketch.DDSketch) messages.PhaseResult {
	r := messages.PhaseResult{
		Count: a.count, Attempted: a.attempted, Succeeded: a.succeeded, Dropped: a.dropped,
		Percentiles: sketchPercentiles(resp),
		Service:     sketchPercentiles(a.service),
	}
	if sketchCount(a.tls) > 0 {
		tls := sketchPercentiles(a.tls)
		r.TLS = &tls
	}
	if len(a.strata) == 0 {
		return r
	}
	w := newWeighted(a.strata, p.opts.maxSample())
	r.Sample = w.percentiles()
	r.CI = w.intervals(p.opts.z())
	r.Max = max(r.Max, r.Sample.Max)
	r.Disagree = disagreements(r.Percentiles, r.CI)
	r.Bimodal = w.bimodality()
	return r
}

// disagreements names the percentiles whose sketch value lies outside the
// sample's interval, widened by the sketch's relative accuracy and by the
// reservoir's rounding to whole microseconds.
func disagreements(sk messages.Percentiles, ci messages.Intervals) []string {
	const slack = 0.001 // ms: one microsecond
	acc := messages.SketchAccuracy
	var out []string
	for i, pair := range [4]struct {
		v  float64
		iv messages.Interval
	}{{sk.P50, ci.P50}, {sk.P90, ci.P90}, {sk.P99, ci.P99}, {sk.P999, ci.P999}} {
		if pair.v < pair.iv[0]*(1-acc)-slack || pair.v > pair.iv[1]*(1+acc)+slack {
			out = append(out, percentileNames[i])
		}
	}
	return out
}

func (p *Pool) health() messages.HealthSummary {
	h := messages.HealthSummary{
		LagP99Max: float64(p.totals.lagP99Max) / 1000,
		CPUMax:    p.totals.cpuMax,
	}
	for _, id := range p.producerIDs() {
		pa := p.prods[id]
		h.SessionsMax += uint64(pa.sessions)
		if pa.saturated {
			h.SaturatedProducers = append(h.SaturatedProducers, id)
		}
	}
	return h
}
