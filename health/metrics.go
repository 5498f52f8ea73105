package health

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// MetricsOptions configure Metrics. A nil *MetricsOptions means the defaults.
type MetricsOptions struct {
	// MaxSteps is how many steps keep their series, per kind (batches seen,
	// results seen); the series of older steps are deleted (default 16: a
	// ramp of ten steps and its refinement).
	MaxSteps int
}

func (o *MetricsOptions) maxSteps() int {
	if o == nil || o.MaxSteps <= 0 {
		return 16
	}
	return o.MaxSteps
}

// Metrics is a private Prometheus registry with the runtime and process
// collectors and imapload's own metrics. Its Observe methods are safe for
// concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	mu       sync.Mutex // orders each observation against the deletion of old steps
	batchWin window
	batch    *batchMetrics
	resWin   window
	res      *resultMetrics
}

// NewMetrics returns Metrics on a registry of their own. It does no I/O.
func NewMetrics(o *MetricsOptions) *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return &Metrics{
		reg:      reg,
		batchWin: newWindow(o.maxSteps()),
		batch:    newBatchMetrics(reg),
		resWin:   newWindow(o.maxSteps()),
		res:      newResultMetrics(reg),
	}
}

// Registry is the registry /metrics exposes, for a caller that adds
// collectors of its own.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// stepKey names one step: the run and step labels.
type stepKey struct {
	run  string
	step int
}

func (k stepKey) labels() prometheus.Labels {
	return prometheus.Labels{"run": k.run, "step": strconv.Itoa(k.step)}
}

// window remembers the most recent steps, oldest first, each with state of
// its own, so that their series can be deleted once max newer steps came.
type window struct {
	max   int
	order []stepKey
	state map[stepKey]*stepState
}

// stepState is what a step's metrics need beyond its series: the distinct
// error kinds seen per phase, as hashes.
type stepState struct {
	kinds [numPhases]map[uint64]struct{}
}

func newWindow(max int) window {
	return window{max: max, state: map[stepKey]*stepState{}}
}

// enter returns k's state, adding k if it is new; evict is called with each
// step pushed out of the window by it.
func (w *window) enter(k stepKey, evict func(stepKey)) *stepState {
	if st, ok := w.state[k]; ok {
		return st
	}
	for len(w.order) >= w.max {
		old := w.order[0]
		w.order = w.order[1:]
		delete(w.state, old)
		evict(old)
	}
	st := &stepState{}
	w.order = append(w.order, k)
	w.state[k] = st
	return st
}

// deleter is a metric vector whose series can be deleted by labels.
type deleter interface {
	DeletePartialMatch(prometheus.Labels) int
}

// deleteStep deletes every series of step k from vecs.
func deleteStep(k stepKey, vecs []deleter) {
	l := k.labels()
	for _, v := range vecs {
		v.DeletePartialMatch(l)
	}
}

// flag is a gauge value for a boolean.
func flag(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
