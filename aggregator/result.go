package aggregator

import (
	"maps"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
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
		Rejected: maps.Clone(p.reject),
		Checks:   t.checks, ChecksDisabled: t.checks.DisabledReason(),
	}
	if secs := time.Duration(p.info.Duration).Seconds(); secs > 0 {
		r.DeliveredRate = float64(t.completed) / secs
		r.SessionRate = float64(p.phases[messages.Login].succeeded) / secs
	}
	if p.lim != nil {
		r.Profile = p.lim.cmd.Profile
		if sc := p.lim.cmd.ScriptOf(); sc != nil {
			r.Script = sc.String()
			r.TargetSessionRate = r.TargetRate / float64(len(sc))
		}
	}
	if r.TargetRate > 0 {
		r.Ratio = r.DeliveredRate / r.TargetRate
	}
	r.Producers, r.Missing = p.roster()
	r.Complete = len(r.Missing) == 0
	r.SharedIDs = p.sharedIDs()
	r.OfferedRate, r.StoppedEarly = p.offered()
	var pooled [messages.NumPhases]*ddsketch.DDSketch
	for ph := range pooled {
		pooled[ph] = p.phases[ph].response.Sketch()
	}
	var wg sync.WaitGroup // the per-producer figures and the phases, side by side
	wg.Go(func() { r.PerProducer, r.AverageP99Fallacy = p.breakdown(pooled) })
	r.Phases = p.phaseResults(pooled)
	wg.Wait()
	r.Errors = p.errorGroups()
	r.Setup = p.totals.setup.result()
	r.Health = p.health()
	r.Connections = p.connections(p.conns)
	r.Deliveries = p.deliveries()
	r.GeneratorSaturated = len(r.Health.SaturatedProducers) > 0
	verdict.Stamp(&r, verdict.DefaultThreshold)
	return r
}

// offered sums the producers' shares of the target rate, and lists those
// whose final batch ended before the window did.
func (p *Pool) offered() (rate float64, early []string) {
	for _, id := range p.producerIDs() {
		pa := p.prods[id]
		rate += pa.rate
		if pa.stoppedEarly(p.info.Duration) {
			early = append(early, id)
		}
	}
	return rate, early
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

// weightedPool keeps weighted samples' memory (up to 7 MiB each at the
// default MaxSample) from one Result to the next, until a garbage collection.
var weightedPool = sync.Pool{New: func() any { return new(weighted) }}

// phaseResults derives each phase's figures. The phases are independent and
// Result runs once per step, so they are shared out over the cores; each
// worker reuses one weighted sample's memory from phase to phase.
func (p *Pool) phaseResults(pooled [messages.NumPhases]*ddsketch.DDSketch) map[string]messages.PhaseResult {
	var todo []int
	for ph := range p.phases {
		if p.phases[ph].present {
			todo = append(todo, ph)
		}
	}
	results := make([]messages.PhaseResult, len(todo))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(todo)) {
		wg.Go(func() {
			w := weightedPool.Get().(*weighted)
			defer weightedPool.Put(w)
			for i := next.Add(1) - 1; i < int64(len(todo)); i = next.Add(1) - 1 {
				ph := todo[i]
				results[i] = p.phaseResult(&p.phases[ph], pooled[ph], w)
			}
		})
	}
	wg.Wait()
	out := make(map[string]messages.PhaseResult, len(todo))
	for i, ph := range todo {
		out[messages.Phase(ph).String()] = results[i]
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
