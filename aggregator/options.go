package aggregator

import (
	"io"
	"log/slog"
	"math"
	"time"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/messages"
)

// Options configure an Aggregator. A nil *Options means the defaults.
type Options struct {
	// StepTimeout is the extra wait past a step's expected end (warm-up +
	// duration after its first batch was stored) before it is closed without
	// the missing final batches (default 15s).
	StepTimeout time.Duration
	// Durable is the durable consumer's name (default DefaultDurable).
	// A restarted aggregator with the same name resumes where it left off.
	Durable string
	// AckWait is how long the stream waits for an acknowledgement before
	// redelivering (default 30s). It bounds how long a restarted aggregator
	// takes to learn of a step its predecessor left open.
	AckWait time.Duration
	// MaxOpenSteps bounds the steps pooled at once (default 64). A batch of
	// another step waits, NAK'd, until one is published.
	MaxOpenSteps int
	// MaxCommands bounds the step commands kept (default
	// bus.StepsMaxMsgs); past it the oldest is forgotten, and a batch of its
	// step is rejected.
	MaxCommands int
	// WarnEvery is how often each kind of warning about bad input is
	// logged at most, with the count of those not logged (default 10s).
	WarnEvery time.Duration
	// ServerWait is how long a step ready to be published waits for the
	// server figures of the observers that announced it (default 10s);
	// those still missing are named in the result (see server.go).
	ServerWait time.Duration
	// Pool tunes the pools (nil: defaults).
	Pool *PoolOptions
	// Bus sizes the streams the aggregator ensures (nil: defaults).
	Bus *bus.Options
	// Logger receives the aggregator's log (default: discarded).
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// OnResult, if set, is called with each step result once it is
	// published (e.g. to expose it as metrics). It runs on the aggregator's
	// loop: it must be quick, and must neither keep nor modify the result.
	OnResult func(*messages.StepResult)
}

func (o *Options) stepTimeout() time.Duration {
	if o == nil || o.StepTimeout <= 0 {
		return 15 * time.Second
	}
	return o.StepTimeout
}

func (o *Options) maxOpenSteps() int {
	if o == nil || o.MaxOpenSteps <= 0 {
		return 64
	}
	return o.MaxOpenSteps
}

func (o *Options) maxCommands() int {
	if o == nil || o.MaxCommands <= 0 {
		return bus.StepsMaxMsgs
	}
	return o.MaxCommands
}

func (o *Options) warnEvery() time.Duration {
	if o == nil || o.WarnEvery <= 0 {
		return 10 * time.Second
	}
	return o.WarnEvery
}

// DefaultDurable is the name of the aggregator's durable consumer of
// batches when Options.Durable is empty: whoever must tell whether an
// aggregator already consumes (imapload run on a fleet's NATS) looks for it.
const DefaultDurable = "imapload-aggregator"

func (o *Options) durable() string {
	if o == nil || o.Durable == "" {
		return DefaultDurable
	}
	return o.Durable
}

func (o *Options) ackWait() time.Duration {
	if o == nil || o.AckWait <= 0 {
		return 30 * time.Second
	}
	return o.AckWait
}

func (o *Options) logger() *slog.Logger {
	if o == nil || o.Logger == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o.Logger
}

func (o *Options) now() func() time.Time {
	if o == nil || o.Now == nil {
		return time.Now
	}
	return o.Now
}

func (o *Options) onResult() func(*messages.StepResult) {
	if o == nil || o.OnResult == nil {
		return func(*messages.StepResult) {}
	}
	return o.OnResult
}

func (o *Options) busOptions() *bus.Options {
	if o == nil {
		return nil
	}
	return o.Bus
}

func (o *Options) poolOptions() *PoolOptions {
	if o == nil {
		return nil
	}
	return o.Pool
}

// PoolOptions tune how a Pool judges what it pooled. A nil *PoolOptions means
// the defaults.
type PoolOptions struct {
	// Confidence is the level of the percentiles' intervals (default 0.95).
	Confidence float64
	// DeviantRatio flags a producer whose response-time P99 over scheduled
	// phases is more than DeviantRatio times the pooled one, or less than
	// 1/DeviantRatio of it (default 2).
	DeviantRatio float64
	// DeviantMinCount is how many latencies a producer needs before its P99
	// is compared with the pool's (default 100: fewer make a P99 noise).
	DeviantMinCount uint64
	// MaxSample caps the reservoir values pooled per phase when Result
	// derives the sample percentiles, intervals and bimodality (default
	// 262144). Beyond it every reservoir is thinned in proportion, by
	// systematic sampling from a start fixed by its producer and sequence
	// number, so the result stays reproducible. The sketch figures are
	// unaffected.
	MaxSample int
}

func (o *PoolOptions) maxSample() int {
	if o == nil || o.MaxSample <= 0 {
		return 1 << 18
	}
	return o.MaxSample
}

func (o *PoolOptions) z() float64 {
	c := 0.95
	if o != nil && o.Confidence > 0 && o.Confidence < 1 {
		c = o.Confidence
	}
	return math.Sqrt2 * math.Erfinv(c)
}

func (o *PoolOptions) deviantRatio() float64 {
	if o == nil || !(o.DeviantRatio > 1) || math.IsInf(o.DeviantRatio, 0) {
		return 2
	}
	return o.DeviantRatio
}

func (o *PoolOptions) deviantMinCount() uint64 {
	if o == nil || o.DeviantMinCount == 0 {
		return 100
	}
	return o.DeviantMinCount
}
