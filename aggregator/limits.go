package aggregator

import (
	"errors"
	"fmt"
	"math/bits"
	"time"

	"github.com/imapload/imapload/messages"
)

// Physical bounds of a step, from its command. A producer cannot schedule
// more than its share of the rate allows over the step; the headroom is
// generous (boundFactor times, plus boundSlack) so that only a batch no
// producer could have sent is refused.
const (
	boundFactor     = 10
	boundSlack      = 10_000
	volumeFactor    = 16          // every count of a producer's batches together, per scheduled command allowed
	maxStepProducer = 100_000     // producers in one step, as messages.StepCommand.Producers allows
	lateness        = time.Hour   // how far past the window a batch may end
	earliness       = time.Minute // how far before the warm-up a batch may start
)

// Rejection reasons, counted per step (Pool.Rejected) and logged.
const (
	ReasonNoCommand   = "no step command"
	ReasonFleetRate   = "fleet rate differs from the command's"
	ReasonWindow      = "duration or warm-up differs from the command's"
	ReasonShare       = "producer share differs from the command's"
	ReasonSpan        = "batch outside the step's window"
	ReasonBounds      = "counts beyond the command's rate"
	ReasonAfterFinal  = "batch after the producer's final one"
	ReasonSecondFinal = "second final batch"
	ReasonProducers   = "too many producers"
)

// rejection is a batch refused because it disagrees with its step's command.
type rejection struct {
	reason, detail string
}

func (r *rejection) Error() string { return ErrRejected.Error() + ": " + r.reason + ": " + r.detail }
func (r *rejection) Unwrap() error { return ErrRejected }

func reject(reason, format string, a ...any) error {
	return &rejection{reason: reason, detail: fmt.Sprintf(format, a...)}
}

// RejectReason is the reason of an error wrapping ErrRejected, or "".
func RejectReason(err error) string {
	var r *rejection
	if errors.As(err, &r) {
		return r.reason
	}
	return ""
}

// limits are the bounds a command sets on each producer's batches.
type limits struct {
	cmd      messages.StepCommand
	warmup   int64  // ns
	duration int64  // ns
	perProd  uint64 // scheduled commands one producer may report in all
}

func newLimits(cmd messages.StepCommand) limits {
	l := limits{cmd: cmd, warmup: int64(cmd.WarmupOrDefault()), duration: int64(cmd.Duration.D())}
	secs := time.Duration(l.warmup + l.duration).Seconds()
	l.perProd = uint64(boundFactor*cmd.ShareFor(1)*secs) + boundSlack // ≤ 9e12: MaxRate × 25 h × 10
	// Held connections are set up, and set up again after a drop, beside
	// the rate: at most once per second each, give or take the backoff.
	l.perProd += uint64(boundFactor * float64(cmd.ConnectionsFor(1)) * (secs + 1)) // ≤ 9e11
	// Deliveries are offered at a rate of their own beside the commands.
	l.perProd += uint64(boundFactor * cmd.DeliverShareFor(1) * secs) // ≤ 9e12
	return l
}

// check refuses a batch whose step shape or single counts disagree with the
// command. It needs no state: it runs before a step is opened.
func (l *limits) check(b *messages.SampleBatch) error {
	in := &b.Info
	switch {
	case in.FleetRate != l.cmd.Rate:
		return reject(ReasonFleetRate, "%v, command %v", in.FleetRate, l.cmd.Rate)
	case in.Duration != l.duration || in.Warmup != l.warmup:
		return reject(ReasonWindow, "%v+%v, command %v+%v", time.Duration(in.Warmup), time.Duration(in.Duration), time.Duration(l.warmup), time.Duration(l.duration))
	case in.Rate != l.cmd.ShareFor(in.Producers) || (l.cmd.Producers > 0 && in.Producers != l.cmd.Producers):
		return reject(ReasonShare, "%v of %d producers", in.Rate, in.Producers)
	case in.FleetDeliverRate != l.cmd.DeliverRate || in.DeliverRate != l.cmd.DeliverShareFor(in.Producers):
		return reject(ReasonShare, "%v of %v deliveries/s with %d producers, command %v", in.DeliverRate, in.FleetDeliverRate, in.Producers, l.cmd.DeliverRate)
	case in.Connections != l.cmd.ConnectionsFor(in.Producers):
		return reject(ReasonShare, "%d connections of %d producers, command %d", in.Connections, in.Producers, l.cmd.ConnectionsFor(in.Producers))
	case b.From < -l.warmup-int64(earliness) || b.To > l.duration+int64(lateness):
		return reject(ReasonSpan, "%v to %v", time.Duration(b.From), time.Duration(b.To))
	case b.Seq > l.perProd || b.Scheduled > l.perProd:
		return reject(ReasonBounds, "seq %d, scheduled %d, at most %d", b.Seq, b.Scheduled, l.perProd)
	}
	if v, ok := volume(b); !ok || v > volumeFactor*l.perProd {
		return reject(ReasonBounds, "%d counts in one batch, at most %d", v, volumeFactor*l.perProd)
	}
	return nil
}

// volume adds up every count of b, reporting false on overflow. Any one
// count of a producer's batches is at most their summed volume, so bounding
// the volume per producer bounds every sum the pool keeps.
func volume(b *messages.SampleBatch) (uint64, bool) {
	s := checkedSum{}
	s.add(b.Scheduled, b.Health.Dropped, b.Health.Lost)
	s.add(b.Arrivals.Watched, b.Arrivals.Seen, b.Arrivals.Missing, b.Arrivals.Duplicates)
	for i := range b.Phases {
		p := &b.Phases[i]
		s.add(p.Attempted, p.Dropped, p.Response.Count, p.Service.Count, p.TLS.Count)
		for _, e := range p.Errors {
			s.add(e.Count)
		}
	}
	for _, st := range b.Setup {
		s.add(st.Started)
	}
	return s.sum, !s.carry
}

// checkedSum adds uint64s and remembers whether any addition overflowed.
type checkedSum struct {
	sum   uint64
	carry bool
}

func (s *checkedSum) add(vs ...uint64) {
	for _, v := range vs {
		var c uint64
		s.sum, c = bits.Add64(s.sum, v, 0)
		s.carry = s.carry || c != 0
	}
}

// admit refuses a batch that does not fit what the producer already sent:
// one final batch, nothing after it, and its counts within its bounds.
func (l *limits) admit(pa *producerAcc, producers int, b *messages.SampleBatch) error {
	v, _ := volume(b) // checked by check
	switch {
	case pa == nil && producers >= maxStepProducer:
		return reject(ReasonProducers, "%d producers already", producers)
	case pa == nil:
		return nil
	case pa.final && b.Seq > pa.finalSeq:
		return reject(ReasonAfterFinal, "seq %d after final %d", b.Seq, pa.finalSeq)
	case pa.final && b.Final:
		return reject(ReasonSecondFinal, "seq %d, final was %d", b.Seq, pa.finalSeq)
	case b.Final && b.Seq < pa.maxSeq:
		return reject(ReasonAfterFinal, "final %d before seq %d", b.Seq, pa.maxSeq)
	case pa.scheduled+b.Scheduled > l.perProd || pa.volume+v > volumeFactor*l.perProd:
		return reject(ReasonBounds, "producer total beyond %d scheduled", l.perProd)
	}
	return nil
}

// checkCommand refuses b when it disagrees with the pool's command.
func (p *Pool) checkCommand(b *messages.SampleBatch) error {
	if p.lim == nil {
		return nil
	}
	return p.count(p.lim.check(b))
}

// admit refuses b when it does not fit its producer's earlier batches.
func (p *Pool) admit(b *messages.SampleBatch) error {
	if p.lim == nil {
		return nil
	}
	return p.count(p.lim.admit(p.prods[b.Producer], len(p.prods), b))
}

func (p *Pool) count(err error) error {
	if r := RejectReason(err); r != "" {
		p.reject[r]++
	}
	return err
}
