package health

import (
	"hash/maphash"
	"strconv"

	"github.com/imapload/imapload/messages"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

const numPhases = messages.NumPhases

// batchMetrics are a producer's own figures, from the batches it cuts.
// Counters add each batch's deltas; gauges hold the step's last batch.
type batchMetrics struct {
	batches, scheduled, delivered               *prometheus.CounterVec // run, step
	attempted, succeeded, dropped, errors       *prometheus.CounterVec // run, step, phase
	errorKinds                                  *prometheus.GaugeVec   // run, step, phase
	offered, lagP99, lagMax, cpu, sessions, sat *prometheus.GaugeVec   // run, step
	lost                                        *prometheus.GaugeVec   // run, step
	held, heldMin, heldTarget                   *prometheus.GaugeVec   // run, step
	heldDrops                                   *prometheus.CounterVec // run, step
	cpuLimit                                    prometheus.Gauge
	seed                                        maphash.Seed
}

func newBatchMetrics(reg prometheus.Registerer) *batchMetrics {
	f := promauto.With(reg)
	step, phase := []string{"run", "step"}, []string{"run", "step", "phase"}
	counter := func(name, help string, labels []string) *prometheus.CounterVec {
		return f.NewCounterVec(prometheus.CounterOpts{Namespace: "imapload", Subsystem: "producer", Name: name, Help: help}, labels)
	}
	gauge := func(name, help string, labels []string) *prometheus.GaugeVec {
		return f.NewGaugeVec(prometheus.GaugeOpts{Namespace: "imapload", Subsystem: "producer", Name: name, Help: help}, labels)
	}
	return &batchMetrics{
		batches:    counter("batches_total", "Sample batches cut in the step.", step),
		scheduled:  counter("scheduled_total", "Commands offered: scheduled with an intended start in the measurement window, finished or dropped.", step),
		delivered:  counter("delivered_total", "Scheduled commands that succeeded (delivered throughput is their rate).", step),
		attempted:  counter("attempted_total", "Commands sent and completed, success or failure, by phase (set-up phases included).", phase),
		succeeded:  counter("succeeded_total", "Commands that completed with OK, by phase.", phase),
		dropped:    counter("dropped_total", "Commands scheduled but never sent (no free session, queue full), by phase.", phase),
		errors:     counter("errors_total", "Commands that failed, by phase (error kinds are in the step result, never labels).", phase),
		errorKinds: gauge("error_kinds", "Distinct normalized error kinds seen in the step, by phase.", phase),
		offered:    gauge("offered_rate", "This producer's share of the step's rate, commands per second.", step),
		lagP99:     gauge("schedule_lag_p99_seconds", "P99 of how late commands were handed to a session after their intended start, in the last batch.", step),
		lagMax:     gauge("schedule_lag_max_seconds", "Largest schedule lag in the last batch.", step),
		cpu:        gauge("cpu_cores", "CPU used by the process during the last batch, in cores (CPU seconds per second).", step),
		sessions:   gauge("sessions", "Open IMAP sessions when the last batch was cut.", step),
		sat:        gauge("saturated", "1 when the generator fell behind its schedule in the last batch.", step),
		lost:       gauge("lost_batches", "Earlier batches of the step that could not be published.", step),
		held:       gauge("held_connections", "Held IDLE connections idling when the last batch was cut.", step),
		heldMin:    gauge("held_connections_min", "Fewest held IDLE connections idling during the last batch's part of the measurement window.", step),
		heldTarget: gauge("held_connections_target", "Held IDLE connections this producer was asked to hold in the step.", step),
		heldDrops:  counter("held_drops_total", "Held IDLE connections that broke during the measurement window.", step),
		cpuLimit: f.NewGauge(prometheus.GaugeOpts{Namespace: "imapload", Subsystem: "producer", Name: "cpu_limit_cores",
			Help: "The most CPU the process may use, in cores (GOMAXPROCS); 0 when unknown."}),
		seed: maphash.MakeSeed(),
	}
}

func (b *batchMetrics) stepVecs() []deleter {
	return []deleter{b.batches, b.scheduled, b.delivered, b.attempted, b.succeeded, b.dropped, b.errors,
		b.errorKinds, b.offered, b.lagP99, b.lagMax, b.cpu, b.sessions, b.sat, b.lost,
		b.held, b.heldMin, b.heldTarget, b.heldDrops}
}

// ObserveBatch adds a batch the producer cut to the metrics. A nil batch,
// or one with an invalid phase, adds what it can: it never panics.
func (m *Metrics) ObserveBatch(sb *messages.SampleBatch) {
	if sb == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := stepKey{sb.Run, sb.Step}
	st := m.batchWin.enter(k, func(old stepKey) { deleteStep(old, m.batch.stepVecs()) })
	b, run, step := m.batch, sb.Run, strconv.Itoa(sb.Step)
	b.batches.WithLabelValues(run, step).Inc()
	b.scheduled.WithLabelValues(run, step).Add(float64(sb.Scheduled))
	b.delivered.WithLabelValues(run, step).Add(float64(sb.Completed))
	b.offered.WithLabelValues(run, step).Set(sb.Info.Rate)
	b.heldTarget.WithLabelValues(run, step).Set(float64(sb.Info.Connections))
	b.observeHealth(run, step, &sb.Health)
	for i := range sb.Phases {
		b.observePhase(run, step, st, &sb.Phases[i])
	}
}

func (b *batchMetrics) observeHealth(run, step string, h *messages.Health) {
	b.lagP99.WithLabelValues(run, step).Set(micros(h.LagP99))
	b.lagMax.WithLabelValues(run, step).Set(micros(h.LagMax))
	b.cpu.WithLabelValues(run, step).Set(h.CPU)
	b.sessions.WithLabelValues(run, step).Set(float64(h.Sessions))
	b.sat.WithLabelValues(run, step).Set(flag(h.Saturated))
	b.lost.WithLabelValues(run, step).Set(float64(h.Lost))
	b.held.WithLabelValues(run, step).Set(float64(h.Held))
	b.heldMin.WithLabelValues(run, step).Set(float64(h.HeldMin))
	b.heldDrops.WithLabelValues(run, step).Add(float64(h.HeldDrops))
	b.cpuLimit.Set(h.CPULimit)
}

func (b *batchMetrics) observePhase(run, step string, st *stepState, ps *messages.PhaseStats) {
	if !ps.Phase.Valid() {
		return
	}
	phase := ps.Phase.String()
	b.attempted.WithLabelValues(run, step, phase).Add(float64(ps.Attempted))
	b.succeeded.WithLabelValues(run, step, phase).Add(float64(ps.Succeeded))
	b.dropped.WithLabelValues(run, step, phase).Add(float64(ps.Dropped))
	var failed uint64
	kinds := &st.kinds[ps.Phase]
	for _, e := range ps.Errors {
		failed += e.Count
		if *kinds == nil {
			*kinds = map[uint64]struct{}{}
		}
		if len(*kinds) <= messages.MaxErrorKinds { // a producer folds the rest into OtherKind
			(*kinds)[maphash.String(b.seed, e.Kind)] = struct{}{}
		}
	}
	b.errors.WithLabelValues(run, step, phase).Add(float64(failed))
	b.errorKinds.WithLabelValues(run, step, phase).Set(float64(len(*kinds)))
}

// micros converts microseconds to seconds.
func micros(us uint64) float64 { return float64(us) / 1e6 }
