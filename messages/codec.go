package messages

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/imapload/imapload/messages/internal/wire"
	"github.com/vmihailenco/msgpack/v5"
)

var encPool = sync.Pool{New: func() any {
	var buf bytes.Buffer
	return &encState{buf: &buf, enc: msgpack.NewEncoder(&buf)}
}}

type encState struct {
	buf *bytes.Buffer
	enc *msgpack.Encoder
}

// EncodeBatch encodes b as msgpack with compact integers. It refuses a batch
// that DecodeBatch would refuse, so a producer learns of a bug before sending.
func EncodeBatch(b *SampleBatch) ([]byte, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	st := encPool.Get().(*encState)
	defer encPool.Put(st)
	st.buf.Reset()
	st.enc.Reset(st.buf)
	st.enc.UseCompactInts(true) // Reset clears the flag
	if err := st.enc.Encode(b); err != nil {
		return nil, fmt.Errorf("%w: encode: %v", ErrInvalidBatch, err)
	}
	if st.buf.Len() > MaxBatchBytes {
		return nil, fmt.Errorf("%w: %d bytes encoded, at most %d; flush more often or shrink the reservoir", ErrInvalidBatch, st.buf.Len(), MaxBatchBytes)
	}
	return bytes.Clone(st.buf.Bytes()), nil
}

// DecodeBatch decodes and validates an untrusted batch. It never allocates much
// more than len(data), never panics, and returns an error wrapping
// ErrInvalidBatch for anything malformed, oversized or out of range.
func DecodeBatch(data []byte) (b *SampleBatch, err error) {
	if len(data) > MaxBatchBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrInvalidBatch, len(data), MaxBatchBytes)
	}
	if rest, err := wire.Check(data); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidBatch, err)
	} else if len(rest) != 0 {
		return nil, fmt.Errorf("%w: %d bytes of trailing data", ErrInvalidBatch, len(rest))
	}
	defer func() { // the decoder is not ours; a panic in it must not stop the aggregator
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("%w: decoder panic: %v", ErrInvalidBatch, r)
		}
	}()
	r := wire.NewReader(data) // the decoders read names and latencies in place
	d := msgpack.NewDecoder(r)
	b = new(SampleBatch)
	if err := d.Decode(b); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidBatch, err)
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("%w: %d bytes of trailing data", ErrInvalidBatch, r.Len())
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	return b, nil
}

// Validate range-checks a batch; every problem found is listed.
func (b *SampleBatch) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if err := ValidName(b.Run); err != nil {
		bad("run: %v", err)
	}
	if err := ValidName(b.Producer); err != nil {
		bad("producer: %v", err)
	}
	if b.Step < 1 || b.Step > MaxStep {
		bad("step: %d, want 1..%d", b.Step, MaxStep)
	}
	if b.Completed > b.Scheduled {
		bad("completed %d > scheduled %d", b.Completed, b.Scheduled)
	}
	if wrapped(b.Seq, b.Scheduled, b.Completed) {
		bad("seq %d, scheduled %d, completed %d: out of range", b.Seq, b.Scheduled, b.Completed)
	}
	if b.To < b.From {
		bad("window: to %d < from %d", b.To, b.From)
	}
	b.Info.validate(bad)
	b.Health.validate(bad)
	validateSetup(b.Setup, bad)
	if wrapped(b.Checks.Run, b.Checks.Failed, b.Checks.Unaddressable) || b.Checks.Failed > b.Checks.Run {
		bad("checks: run %d, failed %d, unaddressable %d out of range", b.Checks.Run, b.Checks.Failed, b.Checks.Unaddressable)
	}
	b.Arrivals.validate(bad)
	var seen [numPhases]bool
	for i := range b.Phases {
		p := &b.Phases[i]
		if !p.Phase.Valid() {
			bad("phase %d: %v", i, p.Phase)
			continue
		}
		if seen[p.Phase] {
			bad("phase %s: listed twice", p.Phase)
		}
		seen[p.Phase] = true
		p.validate(bad)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInvalidBatch, errors.Join(errs...))
}

func (s *StepInfo) validate(bad func(string, ...any)) {
	if !finiteIn(s.FleetRate, 0, MaxRate) || !finiteIn(s.Rate, 0, MaxRate) {
		bad("info: rates %v/%v out of range", s.FleetRate, s.Rate)
	}
	if s.Connections < 0 || s.Connections > MaxConnections {
		bad("info: connections %d out of range", s.Connections)
	}
	if !finiteIn(s.FleetDeliverRate, 0, MaxRate) || !finiteIn(s.DeliverRate, 0, MaxRate) {
		bad("info: deliver rates %v/%v out of range", s.FleetDeliverRate, s.DeliverRate)
	}
	if s.Producers < 0 || s.Warmup < 0 || s.Duration < 0 ||
		s.Warmup > int64(MaxWarmup) || s.Duration > int64(MaxStepDuration) {
		bad("info: producers %d, warmup %d ns, duration %d ns out of range", s.Producers, s.Warmup, s.Duration)
	}
}

func (h *Health) validate(bad func(string, ...any)) {
	if !finiteIn(h.CPU, 0, 1e4) || !finiteIn(h.CPULimit, 0, 1e4) {
		bad("health: cpu %v of %v cores out of range", h.CPU, h.CPULimit)
	}
	if !finiteIn(h.RunDelay, 0, 1e4) || !finiteIn(h.Pressure, 0, 1) || !finiteIn(h.Throttled, 0, 1) {
		bad("health: run delay %v, pressure %v, throttled %v out of range", h.RunDelay, h.Pressure, h.Throttled)
	}
	if wrapped(h.LagP99, h.LagMax, h.Dropped, h.Lost) || h.Sessions > math.MaxInt32 {
		bad("health: lag %d/%d µs, dropped %d, lost %d, sessions %d out of range", h.LagP99, h.LagMax, h.Dropped, h.Lost, h.Sessions)
	}
	if h.Held > MaxConnections || h.HeldMin > h.Held || wrapped(h.HeldDrops) {
		bad("health: held %d, held min %d, held drops %d out of range", h.Held, h.HeldMin, h.HeldDrops)
	}
}

func (p *PhaseStats) validate(bad func(string, ...any)) {
	if wrapped(p.Attempted, p.Succeeded, p.Dropped, p.Response.Count, p.Service.Count, p.TLS.Count) {
		bad("phase %s: attempted %d, succeeded %d, dropped %d or a sample count out of range", p.Phase, p.Attempted, p.Succeeded, p.Dropped)
	}
	if p.Succeeded > p.Attempted {
		bad("phase %s: succeeded %d > attempted %d", p.Phase, p.Succeeded, p.Attempted)
	}
	var failed uint64
	for _, e := range p.Errors {
		if e.Kind == "" || len(e.Kind) > MaxKindBytes || len(e.Example) > MaxExampleBytes {
			bad("phase %s: error kind %.40q: empty or too long", p.Phase, e.Kind)
		}
		if wrapped(e.Count) {
			bad("phase %s: error kind %.40q: count %d out of range", p.Phase, e.Kind, e.Count)
		}
		if failed+e.Count < failed {
			bad("phase %s: error counts overflow", p.Phase)
		}
		failed += e.Count
	}
	if failed != p.Attempted-p.Succeeded && p.Succeeded <= p.Attempted {
		bad("phase %s: errors add up to %d, attempted − succeeded is %d", p.Phase, failed, p.Attempted-p.Succeeded)
	}
	for _, ns := range [...]struct {
		name string
		s    *Sample
	}{{"response", &p.Response}, {"service", &p.Service}, {"tls", &p.TLS}} {
		name, s := ns.name, ns.s
		if uint64(len(s.Values)) > s.Count || len(s.Sketch) > MaxSketchBytes || (s.Count > 0) != (len(s.Sketch) > 0) {
			bad("phase %s %s: %d values from count %d, sketch %d bytes", p.Phase, name, len(s.Values), s.Count, len(s.Sketch))
		}
	}
	if p.Response.Count > p.Succeeded || p.Service.Count > p.Succeeded {
		bad("phase %s: more latencies (%d) than successes (%d)", p.Phase, p.Response.Count, p.Succeeded)
	}
}

// wrapped reports a count of 2⁶³ or more. No producer counts that far, but
// msgpack decodes a negative number into an unsigned field without error, as
// 2⁶⁴ minus its magnitude (and truncates into a uint32, hence the smaller cap
// on Health.Sessions).
func wrapped(counts ...uint64) bool {
	for _, c := range counts {
		if c > math.MaxInt64 {
			return true
		}
	}
	return false
}

func finiteIn(v, lo, hi float64) bool {
	return !math.IsNaN(v) && v >= lo && v <= hi
}
