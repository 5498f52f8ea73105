package recorder

import (
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/imapload/imapload/messages"
)

// Options tune a Recorder. A nil *Options means the defaults.
type Options struct {
	// Reservoir is the reservoir capacity per phase and latency kind
	// (default 1024, at most messages.MaxReservoir).
	Reservoir int
	// Seed seeds the reservoir's sampling (default: random).
	Seed uint64
	// SaturationLag is the schedule-lag P99 above which a batch is marked
	// generator-saturated (default 20 ms).
	SaturationLag time.Duration
	// Secrets are strings (passwords, tokens) never to appear in an error
	// kind or example; each is replaced by "***".
	Secrets []string
}

func (o *Options) reservoir() int {
	if o == nil || o.Reservoir <= 0 {
		return 1024
	}
	return min(o.Reservoir, messages.MaxReservoir)
}

func (o *Options) seed() uint64 {
	if o == nil || o.Seed == 0 {
		return rand.Uint64()
	}
	return o.Seed
}

func (o *Options) saturationLag() time.Duration {
	if o == nil || o.SaturationLag <= 0 {
		return 20 * time.Millisecond
	}
	return o.SaturationLag
}

// Recorder accumulates one producer's measurements of one step. It is safe for
// concurrent use. Create it with New.
type Recorder struct {
	run      string
	step     int
	producer string
	info     messages.StepInfo
	satLag   time.Duration
	redact   *strings.Replacer
	kinds    kindCache

	mu      sync.Mutex
	rng     *rand.Rand
	phases  [messages.NumPhases]phaseRec
	dropped uint64
	checks  messages.Checks
	arrived messages.Arrivals
	sched   uint64
	done    uint64
	seq     uint64

	// The schedule lag has a lock of its own: the dispatcher notes it on
	// every command and must never wait behind a Cut encoding the batch,
	// which would be lag the generator caused itself.
	lagMu  sync.Mutex
	lag    *ddsketch.DDSketch
	lagMax time.Duration
}

// New returns a Recorder for producer's part of run's step. It does no I/O.
func New(run string, step int, producer string, info messages.StepInfo, opts *Options) *Recorder {
	r := &Recorder{
		run: run, step: step, producer: producer, info: info,
		satLag: opts.saturationLag(),
		rng:    rand.New(rand.NewPCG(opts.seed(), 0x696d61706c6f6164)),
		lag:    messages.NewSketch(),
	}
	if opts != nil && len(opts.Secrets) > 0 {
		var pairs []string
		for _, s := range opts.Secrets {
			if s != "" {
				pairs = append(pairs, s, "***")
			}
		}
		r.redact = strings.NewReplacer(pairs...)
	}
	for i := range r.phases {
		r.phases[i] = newPhaseRec(opts.reservoir())
	}
	return r
}

// Record notes a successful command of phase p: response is measured from the
// intended start, service from the send.
func (r *Recorder) Record(p messages.Phase, response, service time.Duration) {
	r.mu.Lock()
	ph := &r.phases[p]
	ph.attempted++
	ph.succeeded++
	ph.response.add(response, r.rng)
	ph.service.add(service, r.rng)
	r.mu.Unlock()
}

// RecordTLS notes the TLS handshake time of a successful dial.
func (r *Recorder) RecordTLS(d time.Duration) {
	r.mu.Lock()
	r.phases[messages.Dial].tls.add(d, r.rng)
	r.mu.Unlock()
}

// Fail notes a failed command of phase p; err's message becomes its kind.
// It returns the kind and example, as Describe does.
func (r *Recorder) Fail(p messages.Phase, err error) (kind, example string) {
	kind, example = r.Describe(err)
	r.mu.Lock()
	ph := &r.phases[p]
	ph.attempted++
	ph.fail(kind, example)
	r.mu.Unlock()
	return kind, example
}

// Describe returns the kind and the example Fail would record for err: its
// message with the secrets scrubbed, normalized (see Normalize) and as it
// is, each cut to the contract's bound. A caller that reports errors
// elsewhere (a log) uses it to name them as the batches do, passwords
// never included.
func (r *Recorder) Describe(err error) (kind, example string) {
	msg := "unknown error"
	if err != nil {
		msg = err.Error()
	}
	if r.redact != nil {
		msg = r.redact.Replace(msg)
	}
	return r.kinds.kind(msg), truncate(msg, messages.MaxExampleBytes)
}

// Drop notes a scheduled command of phase p that the generator never sent.
func (r *Recorder) Drop(p messages.Phase) {
	r.mu.Lock()
	r.phases[p].dropped++
	r.dropped++
	r.sched++
	r.mu.Unlock()
}

// DropApart notes a job of phase p scheduled at a rate of its own (a
// delivery) that the generator never sent: counted in the phase only, not
// among the step's scheduled commands nor the health's drops.
func (r *Recorder) DropApart(p messages.Phase) {
	r.mu.Lock()
	r.phases[p].dropped++
	r.mu.Unlock()
}

// Arrived adds a's counts to the batch's arrivals (see messages.Arrivals).
func (r *Recorder) Arrived(a messages.Arrivals) {
	r.mu.Lock()
	r.arrived.Add(a)
	r.mu.Unlock()
}

// Scheduled notes that a command the generator scheduled has finished, with
// ok true when it succeeded. Record or Fail note the commands it took (the
// command itself, and any set-up such as a reconnect).
func (r *Recorder) Scheduled(ok bool) {
	r.mu.Lock()
	r.sched++
	if ok {
		r.done++
	}
	r.mu.Unlock()
}

// Check notes an integrity check made, ok when the message came back intact.
func (r *Recorder) Check(ok bool) {
	r.mu.Lock()
	r.checks.Run++
	if !ok {
		r.checks.Failed++
	}
	r.mu.Unlock()
}

// Unaddressable notes a successful APPEND that no check could address: the
// server named no UID for it.
func (r *Recorder) Unaddressable() {
	r.mu.Lock()
	r.checks.Unaddressable++
	r.mu.Unlock()
}

// Lag notes how late a command was handed on after its intended start.
func (r *Recorder) Lag(d time.Duration) {
	if d < 0 {
		d = 0
	}
	r.lagMu.Lock()
	_ = r.lag.Add(float64(d) / float64(time.Microsecond))
	r.lagMax = max(r.lagMax, d)
	r.lagMu.Unlock()
}

// Cut returns the batch of everything recorded since the previous Cut and
// starts afresh. from and to bound the part of the step it covers, measured
// from the start of the measurement window. h supplies what only the caller
// knows (CPU and its limit, Sessions, Lost, what kept the process off the
// CPU, and Saturated if it knows better); Cut fills in
// the schedule lag and drops, and marks saturation when lag P99 exceeds the
// configured bound.
func (r *Recorder) Cut(from, to time.Duration, final bool, h messages.Health) *messages.SampleBatch {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := &messages.SampleBatch{
		Run: r.run, Step: r.step, Producer: r.producer, Seq: r.seq, Final: final,
		Sent: time.Now().UTC(), From: int64(from), To: int64(to), Info: r.info,
		Scheduled: r.sched, Completed: r.done, Checks: r.checks, Arrivals: r.arrived,
	}
	r.seq++
	r.sched, r.done, r.checks, r.arrived = 0, 0, messages.Checks{}, messages.Arrivals{}
	for i := range r.phases {
		if ps, ok := r.phases[i].take(messages.Phase(i)); ok {
			b.Phases = append(b.Phases, ps)
		}
	}
	b.Health = r.health(h)
	return b
}

func (r *Recorder) health(h messages.Health) messages.Health {
	h.Dropped = r.dropped
	r.dropped = 0
	r.lagMu.Lock()
	defer r.lagMu.Unlock()
	if !r.lag.IsEmpty() {
		p99, _ := r.lag.GetValueAtQuantile(0.99)
		h.LagP99 = uint64(p99)
		h.LagMax = uint64(r.lagMax / time.Microsecond)
		if time.Duration(p99)*time.Microsecond > r.satLag {
			h.Saturated = true
		}
	}
	r.lag.Clear()
	r.lagMax = 0
	return h
}

// Seq is the sequence number the next Cut will carry.
func (r *Recorder) Seq() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seq
}
