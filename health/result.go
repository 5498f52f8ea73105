package health

import (
	"strconv"

	"github.com/imapload/imapload/messages"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// verdicts are the values of the verdict label.
var verdicts = []string{messages.VerdictHeld, messages.VerdictBelow, messages.VerdictInconclusive}

// resultMetrics are the step results an aggregator published: each gauge
// holds the step's latest revision.
type resultMetrics struct {
	results                                            prometheus.Counter
	target, offered, delivered, ratio, revision        *prometheus.GaugeVec // run, step
	scheduled, succeeded, dropped, complete, saturated *prometheus.GaugeVec // run, step
	producers, lagP99Max, cpuMax                       *prometheus.GaugeVec // run, step
	verdict                                            *prometheus.GaugeVec // run, step, verdict
	errors, p99                                        *prometheus.GaugeVec // run, step, phase
}

func newResultMetrics(reg prometheus.Registerer) *resultMetrics {
	f := promauto.With(reg)
	step := []string{"run", "step"}
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return f.NewGaugeVec(prometheus.GaugeOpts{Namespace: "imapload", Subsystem: "step", Name: name, Help: help},
			append(step, labels...))
	}
	return &resultMetrics{
		results: f.NewCounter(prometheus.CounterOpts{Namespace: "imapload", Name: "results_total",
			Help: "Step results published, revisions included."}),
		target:    gauge("target_rate", "The step command's fleet-wide rate, commands per second."),
		offered:   gauge("offered_rate", "The shares of the target rate the producers that took part offered, summed, commands per second."),
		delivered: gauge("delivered_rate", "Successful scheduled commands in the window per second, summed over producers."),
		ratio:     gauge("ratio", "Delivered rate divided by target rate."),
		revision:  gauge("revision", "Revision of the step's latest result (0 for the first)."),
		scheduled: gauge("scheduled", "Scheduled commands whose intended start fell in the window."),
		succeeded: gauge("succeeded", "Scheduled commands that succeeded."),
		dropped:   gauge("dropped", "Scheduled commands the generators never sent."),
		complete:  gauge("complete", "1 when every producer that accepted the step sent its final batch."),
		saturated: gauge("generator_saturated", "1 when a producer fell behind its own schedule."),
		producers: gauge("producers", "Producers that took part in the step."),
		lagP99Max: gauge("schedule_lag_p99_max_seconds", "Largest per-batch schedule-lag P99 of any producer."),
		cpuMax:    gauge("cpu_max_cores", "Highest CPU use of any producer in any batch, in cores."),
		verdict:   gauge("verdict", "1 for the step's verdict (held, below, inconclusive), 0 for the others.", "verdict"),
		errors:    gauge("errors", "Failed commands by phase, summed over producers.", "phase"),
		p99:       gauge("response_p99_seconds", "Pooled response-time P99 by phase (from the intended start).", "phase"),
	}
}

func (r *resultMetrics) stepVecs() []deleter {
	return []deleter{r.target, r.offered, r.delivered, r.ratio, r.revision, r.scheduled, r.succeeded,
		r.dropped, r.complete, r.saturated, r.producers, r.lagP99Max, r.cpuMax, r.verdict, r.errors, r.p99}
}

// ObserveResult sets the gauges of a step result the aggregator published;
// a later revision of the step replaces them. Phases and verdicts that are
// not imapload's are left out, so labels stay bounded.
func (m *Metrics) ObserveResult(sr *messages.StepResult) {
	if sr == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := stepKey{sr.Run, sr.Step}
	m.resWin.enter(k, func(old stepKey) { deleteStep(old, m.res.stepVecs()) })
	r, run, step := m.res, sr.Run, strconv.Itoa(sr.Step)
	r.results.Inc()
	set := func(g *prometheus.GaugeVec, v float64) { g.WithLabelValues(run, step).Set(v) }
	set(r.target, sr.TargetRate)
	set(r.offered, sr.OfferedRate)
	set(r.delivered, sr.DeliveredRate)
	set(r.ratio, sr.Ratio)
	set(r.revision, float64(sr.Revision))
	set(r.scheduled, float64(sr.Scheduled))
	set(r.succeeded, float64(sr.Succeeded))
	set(r.dropped, float64(sr.Dropped))
	set(r.complete, flag(sr.Complete))
	set(r.saturated, flag(sr.GeneratorSaturated))
	set(r.producers, float64(len(sr.Producers)))
	set(r.lagP99Max, sr.Health.LagP99Max/1e3)
	set(r.cpuMax, sr.Health.CPUMax)
	r.observeVerdict(run, step, sr.Verdict)
	r.observePhases(run, step, sr)
}

func (r *resultMetrics) observeVerdict(run, step, verdict string) {
	if !isVerdict(verdict) {
		return
	}
	for _, v := range verdicts {
		r.verdict.WithLabelValues(run, step, v).Set(flag(v == verdict))
	}
}

func isVerdict(v string) bool {
	for _, w := range verdicts {
		if v == w {
			return true
		}
	}
	return false
}

// observePhases sets each phase's errors and P99; every phase of
// imapload's gets an errors series, 0 when it had none.
func (r *resultMetrics) observePhases(run, step string, sr *messages.StepResult) {
	var failed [numPhases]float64
	for _, e := range sr.Errors {
		if p, err := messages.ParsePhase(e.Phase); err == nil {
			failed[p] += float64(e.Count)
		}
	}
	for _, p := range messages.Phases() {
		r.errors.WithLabelValues(run, step, p.String()).Set(failed[p])
		if pr, ok := sr.Phases[p.String()]; ok {
			r.p99.WithLabelValues(run, step, p.String()).Set(pr.P99 / 1e3)
		}
	}
}
