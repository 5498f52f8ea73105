package recorder

import (
	"math/rand/v2"
	"sort"
	"time"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/imapload/imapload/messages"
)

// latencies is one latency kind of one phase: a reservoir and a sketch.
type latencies struct {
	res    reservoir
	sketch *ddsketch.DDSketch
}

func newLatencies(capacity int) latencies {
	return latencies{res: newReservoir(capacity), sketch: messages.NewSketch()}
}

// micros converts d to whole microseconds, rounded, clamped to the wire range.
func micros(d time.Duration) uint32 {
	if d <= 0 {
		return 0
	}
	us := (d + time.Microsecond/2) / time.Microsecond
	if us > messages.MaxLatencyMicros {
		return messages.MaxLatencyMicros
	}
	return uint32(us)
}

func (l *latencies) add(d time.Duration, rng *rand.Rand) {
	l.res.add(micros(d), rng)
	_ = l.sketch.Add(max(float64(d), 0) / float64(time.Microsecond)) // only negative values fail
}

func (l *latencies) take() messages.Sample {
	values, n := l.res.take()
	if n == 0 {
		return messages.Sample{}
	}
	s := messages.Sample{Count: n, Values: values, Sketch: messages.EncodeSketch(nil, l.sketch)}
	l.sketch.Clear()
	return s
}

type errEntry struct {
	count   uint64
	example string
}

// phaseRec accumulates one phase between two cuts.
type phaseRec struct {
	attempted, succeeded, dropped uint64
	response, service, tls        latencies
	errors                        map[string]*errEntry
}

func newPhaseRec(capacity int) phaseRec {
	return phaseRec{
		response: newLatencies(capacity),
		service:  newLatencies(capacity),
		tls:      newLatencies(capacity),
		errors:   map[string]*errEntry{},
	}
}

// fail counts one error of kind; past MaxErrorKinds distinct kinds the rest
// are folded into messages.OtherKind, so a batch stays bounded.
func (p *phaseRec) fail(kind, msg string) {
	e, ok := p.errors[kind]
	if !ok {
		if len(p.errors) >= messages.MaxErrorKinds-1 {
			kind = messages.OtherKind
			e = p.errors[kind]
		}
		if e == nil {
			e = &errEntry{example: truncate(msg, messages.MaxExampleBytes)}
			p.errors[kind] = e
		}
	}
	e.count++
}

func (p *phaseRec) take(ph messages.Phase) (messages.PhaseStats, bool) {
	if p.attempted == 0 && p.dropped == 0 && p.tls.res.seen == 0 {
		return messages.PhaseStats{}, false
	}
	ps := messages.PhaseStats{
		Phase: ph, Attempted: p.attempted, Succeeded: p.succeeded, Dropped: p.dropped,
		Response: p.response.take(), Service: p.service.take(), TLS: p.tls.take(),
	}
	for kind, e := range p.errors {
		ps.Errors = append(ps.Errors, messages.ErrorCount{Kind: kind, Count: e.count, Example: e.example})
	}
	sort.Slice(ps.Errors, func(i, j int) bool {
		if ps.Errors[i].Count != ps.Errors[j].Count {
			return ps.Errors[i].Count > ps.Errors[j].Count
		}
		return ps.Errors[i].Kind < ps.Errors[j].Kind
	})
	p.attempted, p.succeeded, p.dropped = 0, 0, 0
	clear(p.errors)
	return ps, true
}
