package aggregator

import (
	"math"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/imapload/imapload/messages"
)

// phaseResult derives one phase's pooled figures.
//
// The response-time percentiles (P50, P90, P99, P99.9) are over every
// scheduled command of the window that was served or never sent: N = Count
// + Dropped, a command never sent counting as an unbounded (+Inf) response
// time. For quantile q, when q·N ≤ Count, the percentile is the merged
// sketch's quantile at q·N/Count; otherwise its rank falls among the
// commands never sent and it is only known to exceed every served response
// time: it reads as Max, the largest, and is named in Above. NeverSent is
// Dropped/N (0 when nothing was dropped). With nothing dropped, the
// percentiles are the sketch's, as before. Failed commands are in neither
// (they are counted in the errors); service-time percentiles are over the
// commands sent.
//
// CI are distribution-free order-statistic intervals over the same N, about
// the server's latency distribution (see interval.go); TooFew names the
// percentiles with too few values for a two-sided one, whose CI is open
// above; Unresolved those whose rank the N values cannot resolve, which read
// as Max (resolved.go). Each interval holds its own estimate. The count-weighted reservoirs give Sample (the percentiles by the
// same rule), the bimodality verdict, and Disagree: the percentiles, those
// in Above aside, whose sketch value lies outside the reservoirs' own
// interval for it, meaning sketch and reservoirs describe different
// latencies.
func (p *Pool) phaseResult(a *phaseAcc, resp *ddsketch.DDSketch, w *weighted) messages.PhaseResult {
	d := demand{served: a.count, dropped: a.dropped}
	r := messages.PhaseResult{
		Count: a.count, Attempted: a.attempted, Succeeded: a.succeeded, Dropped: a.dropped,
		NeverSent: d.neverSent(), Service: sketchPercentiles(a.service.Sketch()),
	}
	if a.tls.Count() > 0 {
		tls := sketchPercentiles(a.tls.Sketch())
		r.TLS = &tls
	}
	largest := sketchMax(resp)
	if len(a.strata) > 0 {
		w.pool(a.strata, p.opts.maxSample())
		r.Sample, _ = d.percentiles(w.quantile, w.largest())
		largest = max(largest, w.largest())
	}
	r.Percentiles, r.Above = d.percentiles(func(q float64) float64 { return sketchQuantile(resp, q) }, largest)
	read := r.Percentiles // as the sketch reads them, for Disagree
	r.Unresolved = unresolved(d.total(), r.Above)
	r.Percentiles = atMax(r.Percentiles, r.Unresolved)
	x := orderStats{r: newRankReader(resp), n: int64(d.total()), served: int64(d.served), max: largest}
	r.CI, r.TooFew = percentileIntervals(x, p.confidence())
	r.CI = holding(r.CI, r.Percentiles)
	if len(a.strata) > 0 {
		all := span{min: float64(w.micros(0)), max: 1000 * largest}
		if sketchCount(resp) > 0 {
			all.min = min(all.min, 1000*sketchMin(resp))
		}
		r.Disagree = w.disagreements(read, d, p.opts.z(), all)
		r.Bimodal = w.bimodality()
	}
	return r
}

// confidence is the level of the intervals, PoolOptions.Confidence (which
// the options hold as its normal quantile z).
func (p *Pool) confidence() float64 { return math.Erf(p.opts.z() / math.Sqrt2) }
