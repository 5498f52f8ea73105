package aggregator

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/imapload/imapload/messages"
)

// batchKey identifies a batch within a step.
type batchKey struct {
	producer string
	seq      uint64
}

func (k batchKey) less(o batchKey) bool {
	if k.producer != o.producer {
		return k.producer < o.producer
	}
	return k.seq < o.seq
}

// Pool pools the sample batches of one step into a messages.StepResult. Add
// accumulates cheaply (sums, sketch merges, references to the reservoirs);
// Result derives every figure once. The result depends only on the set of
// batches added, never on their order (of two different batches with the
// same producer and sequence number, the first added wins), so a replay of
// the same stream gives the same result.
//
// A Pool is not safe for concurrent use.
type Pool struct {
	run  string
	step int
	opts *PoolOptions

	seen   map[batchKey]struct{}
	prods  map[string]*producerAcc
	phases [messages.NumPhases]phaseAcc
	errs   map[errKey]*errAcc
	ref    *batchKey // the first batch in (producer, seq) order: its Info is the step's, without a command
	info   messages.StepInfo
	lim    *limits // the step's command, when the pool has one
	volume uint64  // every count of every batch, summed: it bounds each sum kept
	totals totals
	bins   []messages.SketchBins          // scratch: the sketches of the batch being added
	reject map[string]uint64              // batches refused for disagreeing with the command, by reason
	conns  int                            // the command's fleet-wide held connections, when it has one
	insts  map[string]map[string]struct{} // the processes (instances) each producer id's batches came from
}

// totals are the step-wide sums and maxima.
type totals struct {
	scheduled, completed, dropped, lost uint64
	batches, duplicates, corrupt        uint64
	lagP99Max                           uint64 // µs
	cpuMax                              float64
	checks                              messages.Checks
	setup                               setupSums
	arrivals                            messages.Arrivals
}

// NewPool returns an empty pool for run's step. It does no I/O.
func NewPool(run string, step int, opts *PoolOptions) *Pool {
	return &Pool{
		run: run, step: step, opts: opts,
		seen:  map[batchKey]struct{}{},
		prods: map[string]*producerAcc{},
		errs:  map[errKey]*errAcc{},
	}
}

// NewCommandPool returns an empty pool for the step cmd starts. The step's
// rate, duration and warm-up are the command's, never a batch's, and Add
// refuses, with an error wrapping ErrRejected, any batch that disagrees with
// the command (see RejectReason). It does no I/O.
func NewCommandPool(cmd messages.StepCommand, opts *PoolOptions) *Pool {
	p := NewPool(cmd.Run, cmd.Step, opts)
	lim := newLimits(cmd)
	p.lim, p.reject = &lim, map[string]uint64{}
	if cmd.ProducerConnections == 0 {
		p.conns = cmd.Connections
	}
	p.info = messages.StepInfo{FleetRate: cmd.Rate, FleetDeliverRate: cmd.DeliverRate, Warmup: lim.warmup, Duration: lim.duration}
	return p
}

// Rejected counts, by reason, the batches Add refused for disagreeing with
// the pool's command.
func (p *Pool) Rejected() map[string]uint64 { return p.reject }

// Add pools b. A batch already added (same producer and sequence number) is
// counted as a duplicate and returns added = false. A batch of another run or
// step returns an error wrapping ErrWrongStep; an invalid one (see
// messages.SampleBatch.Validate) or one whose sketches do not decode returns
// an error wrapping ErrInvalidBatch. On error the pool is unchanged.
//
// The pool keeps b's response reservoirs (the Values slices) without copying
// them: do not modify b after adding it.
func (p *Pool) Add(b *messages.SampleBatch) (added bool, err error) {
	if b == nil {
		return false, fmt.Errorf("%w: nil batch", ErrInvalidBatch)
	}
	if b.Run != p.run || b.Step != p.step {
		return false, fmt.Errorf("%w: batch of run %q step %d, pool of run %q step %d", ErrWrongStep, b.Run, b.Step, p.run, p.step)
	}
	if err := b.Validate(); err != nil {
		return false, fmt.Errorf("%w: %w", ErrInvalidBatch, err)
	}
	if err := p.checkCommand(b); err != nil {
		return false, err
	}
	k := batchKey{b.Producer, b.Seq}
	if _, dup := p.seen[k]; dup {
		p.totals.duplicates++
		return false, nil
	}
	if err := p.admit(b); err != nil {
		return false, err
	}
	v, ok := volume(b)
	if !ok || p.volume+v < p.volume {
		return false, fmt.Errorf("%w: producer %s batch %d: counts overflow the step's sums", ErrInvalidBatch, b.Producer, b.Seq)
	}
	if err := p.decodeSketches(b); err != nil {
		return false, fmt.Errorf("%w: producer %s batch %d: %w", ErrInvalidBatch, b.Producer, b.Seq, err)
	}
	p.seen[k] = struct{}{}
	p.volume += v
	p.commit(b, k)
	return true, nil
}

// From records that a batch of producer's came from the process instance
// (read off its message id; "" when the id carries none). A producer id seen
// from two instances is named in the result's SharedIDs: two processes ran
// with one id.
func (p *Pool) From(producer, instance string) {
	if instance == "" {
		return
	}
	if p.insts == nil {
		p.insts = map[string]map[string]struct{}{}
	}
	if p.insts[producer] == nil {
		p.insts[producer] = map[string]struct{}{}
	}
	p.insts[producer][instance] = struct{}{}
}

// sharedIDs lists the producer ids seen from more than one instance.
func (p *Pool) sharedIDs() []messages.SharedID {
	var out []messages.SharedID
	for id, set := range p.insts {
		if len(set) > 1 {
			out = append(out, messages.SharedID{Producer: id, Instances: slices.Sorted(maps.Keys(set))})
		}
	}
	slices.SortFunc(out, func(a, b messages.SharedID) int { return strings.Compare(a.Producer, b.Producer) })
	return out
}

// Corrupt counts a batch of this step that could not be decoded at all.
func (p *Pool) Corrupt() { p.totals.corrupt++ }

// decodeSketches decodes and checks every sketch of b into p.bins, three per
// phase (response, service, TLS; empty when absent), before anything is
// merged, so that a bad sketch leaves the pool unchanged. The scratch is
// reused from batch to batch: adding allocates only when an accumulated
// sketch grows.
func (p *Pool) decodeSketches(b *messages.SampleBatch) error {
	if n := 3 * len(b.Phases); len(p.bins) < n {
		p.bins = append(p.bins, make([]messages.SketchBins, n-len(p.bins))...)
	}
	for i := range b.Phases {
		ps := &b.Phases[i]
		for j, s := range [3]*messages.Sample{&ps.Response, &ps.Service, &ps.TLS} {
			if err := p.bins[3*i+j].Decode(s.Sketch); err != nil {
				return fmt.Errorf("phase %s: %w", ps.Phase, err)
			}
		}
	}
	return nil
}

func (p *Pool) commit(b *messages.SampleBatch, k batchKey) {
	t := &p.totals
	t.batches++
	t.scheduled += b.Scheduled
	t.completed += b.Completed
	t.checks.Add(b.Checks)
	t.setup.add(b.Setup)
	t.arrivals.Add(b.Arrivals)
	t.dropped += b.Health.Dropped
	t.lost += b.Health.Lost
	t.lagP99Max = max(t.lagP99Max, b.Health.LagP99)
	t.cpuMax = max(t.cpuMax, b.Health.CPU)
	if p.lim == nil && (p.ref == nil || k.less(*p.ref)) {
		p.ref, p.info = &k, b.Info
	}
	pa := p.producer(b.Producer)
	pa.add(b)
	pa.held.add(b, p.info.Duration)
	for i := range b.Phases {
		p.addPhase(pa, k, &b.Phases[i], p.bins[3*i:3*i+3])
	}
}

func (p *Pool) producer(id string) *producerAcc {
	pa := p.prods[id]
	if pa == nil {
		pa = &producerAcc{}
		p.prods[id] = pa
	}
	return pa
}

// addPhase pools one phase of a batch. Its sketches are merged into the
// pool's, and its response sketch into the producer's, kept as a plain bin
// list (a dense DDSketch per producer and phase cost more memory than the
// rest of the pool).
func (p *Pool) addPhase(pa *producerAcc, k batchKey, ps *messages.PhaseStats, bins []messages.SketchBins) {
	a := &p.phases[ps.Phase]
	a.present = true
	a.attempted += ps.Attempted
	a.succeeded += ps.Succeeded
	a.dropped += ps.Dropped
	a.count += ps.Response.Count
	pa.errors += ps.Attempted - ps.Succeeded
	pa.response[ps.Phase].Add(&bins[0])
	a.response.Add(&bins[0])
	a.service.Add(&bins[1])
	a.tls.Add(&bins[2])
	if len(ps.Response.Values) > 0 {
		a.strata = append(a.strata, stratum{key: k, count: ps.Response.Count, values: ps.Response.Values})
	}
	for _, e := range ps.Errors {
		p.addError(k, ps.Phase, e)
	}
}

// phaseAcc accumulates one phase over every batch.
type phaseAcc struct {
	present                       bool
	attempted, succeeded, dropped uint64
	count                         uint64 // response latencies
	response, service, tls        messages.SketchSum
	strata                        []stratum
}

// stratum is one batch's response-time reservoir: values drawn uniformly
// from count latencies.
type stratum struct {
	key    batchKey
	count  uint64
	values []uint32
}

// producerAcc accumulates one producer's batches.
type producerAcc struct {
	batches   uint64
	final     bool
	finalSeq  uint64
	maxSeq    uint64 // its highest sequence number
	scheduled uint64
	volume    uint64 // every count of its batches, summed (see volume)
	finalTo   int64  // where its final batch ends, ns into the window
	lost      uint64
	completed uint64
	errors    uint64
	saturated bool
	rate      float64                                 // its share of the target, commands/s
	deliver   float64                                 // its share of the deliver rate, deliveries/s
	sessions  uint32                                  // the most sessions it reported open
	health    messages.Health                         // the highest of its batches' figures
	lagging   messages.Health                         // the same over its saturated batches
	response  [messages.NumPhases]messages.SketchBins // its response times, per phase
	held      heldAcc                                 // its held IDLE connections
}

func (pa *producerAcc) add(b *messages.SampleBatch) {
	if pa.batches == 0 {
		pa.rate, pa.deliver = b.Info.Rate, b.Info.DeliverRate
	}
	pa.batches++
	v, _ := volume(b)
	pa.maxSeq, pa.scheduled, pa.volume = max(pa.maxSeq, b.Seq), pa.scheduled+b.Scheduled, pa.volume+v
	if b.Final {
		pa.final, pa.finalSeq, pa.finalTo = true, b.Seq, b.To
	}
	pa.lost += b.Health.Lost
	pa.completed += b.Completed
	pa.saturated = pa.saturated || b.Health.Saturated
	pa.sessions = max(pa.sessions, b.Health.Sessions)
	maxHealth(&pa.health, &b.Health)
	if b.Health.Saturated {
		maxHealth(&pa.lagging, &b.Health)
	}
}

// maxHealth raises acc to the highest of its figures and h's.
func maxHealth(acc, h *messages.Health) {
	acc.LagP99 = max(acc.LagP99, h.LagP99)
	acc.CPU = max(acc.CPU, h.CPU)
	acc.CPULimit = max(acc.CPULimit, h.CPULimit)
	acc.RunDelay = max(acc.RunDelay, h.RunDelay)
	acc.Pressure = max(acc.Pressure, h.Pressure)
	acc.Throttled = max(acc.Throttled, h.Throttled)
	acc.Stopped = acc.Stopped || h.Stopped
	acc.Local = acc.Local || h.Local
}

// stoppedEarly reports whether its final batch ended before the window did.
func (pa *producerAcc) stoppedEarly(window int64) bool {
	return pa.final && pa.finalTo < window
}

// done reports whether the producer's batches are all in: its final batch,
// and every earlier one either here or reported lost.
func (pa *producerAcc) done() bool {
	return pa.final && pa.batches+pa.lost >= pa.finalSeq+1
}

// finished reports whether every producer that sent something is done. An
// empty pool is not finished.
func (p *Pool) finished() bool {
	if len(p.prods) == 0 {
		return false
	}
	for _, pa := range p.prods {
		if !pa.done() {
			return false
		}
	}
	return true
}
