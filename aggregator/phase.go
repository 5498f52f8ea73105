package aggregator

import (
	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/imapload/imapload/messages"
)

// phaseResult derives one phase's pooled figures: response and service
// percentiles from the merged sketches, and the interval, sample percentiles
// and bimodality from the count-weighted reservoirs.
func (p *Pool) phaseResult(a *phaseAcc, resp *ddsketch.DDSketch, w *weighted) messages.PhaseResult {
	r := messages.PhaseResult{
		Count: a.count, Attempted: a.attempted, Succeeded: a.succeeded, Dropped: a.dropped,
		Percentiles: sketchPercentiles(resp),
		Service:     sketchPercentiles(a.service.Sketch()),
	}
	if a.tls.Count() > 0 {
		tls := sketchPercentiles(a.tls.Sketch())
		r.TLS = &tls
	}
	if len(a.strata) == 0 {
		return r
	}
	w.pool(a.strata, p.opts.maxSample())
	r.Sample = w.percentiles()
	r.Max = max(r.Max, r.Sample.Max)
	all := span{min: float64(w.micros(0)), max: 1000 * r.Max}
	if sketchCount(resp) > 0 {
		all.min = min(all.min, 1000*sketchMin(resp))
	}
	r.CI = w.intervals(p.opts.z(), all)
	r.Disagree = disagreements(r.Percentiles, r.CI)
	r.Bimodal = w.bimodality()
	return r
}
