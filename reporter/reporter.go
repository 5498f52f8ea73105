package reporter

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"

	"github.com/nats-io/nats.go"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/messages"
)

// Options configure a Reporter. A nil *Options means the defaults.
type Options struct {
	// Threshold is the delivered/target ratio under which a step is the
	// knee, in (0, 1]. 0 means DefaultThreshold.
	Threshold float64
	// OutDir, if set, receives WriteFiles after every update: directly for a
	// reporter of one run, in OutDir/<run> for a reporter of every run.
	OutDir string
	// Logger receives skipped messages and failed publishes or writes.
	// Default: no logging.
	Logger *slog.Logger
	// Out, if set, receives one line per step result as it is read (its
	// Summary) and, when Run returns, the table of every run it reported;
	// with Verbose, the table after every update instead.
	Out     io.Writer
	Verbose bool
	// Bus sizes the results stream that Run creates if it is missing; it must
	// match what the other roles use. nil means bus defaults.
	Bus *bus.Options
}

// Stats counts what a Reporter has seen and done.
type Stats struct {
	// Results counts step results accepted.
	Results uint64
	// Ignored counts run reports read back (this reporter's or another's).
	Ignored uint64
	// Invalid counts messages that were not a valid result (see DecodeResult).
	Invalid uint64
	// Reports counts run reports built; Published those published.
	Reports   uint64
	Published uint64
	// PublishErrors and WriteErrors count failed publishes and file writes.
	PublishErrors uint64
	WriteErrors   uint64
}

// updatesBuffer is the capacity of the Updates channel.
const updatesBuffer = 16

// Reporter turns the step results of a run into run reports: it reads
// messages.ResultsStream, finds the knee, publishes each new RunReport on the
// run's results subject, and renders it to Out and OutDir.
type Reporter struct {
	nc      *nats.Conn
	run     string // "" = every run
	opts    Options
	log     *slog.Logger
	updates chan messages.RunReport
	started atomic.Bool

	mu      sync.Mutex
	reports map[string]messages.RunReport
	stats   Stats

	runs map[string]*runState // owned by Run
}

// New returns a Reporter of run on nc, or of every run when run is "". It
// does no I/O: Run does.
func New(nc *nats.Conn, run string, opts *Options) (*Reporter, error) {
	if nc == nil {
		return nil, fmt.Errorf("%w: nil NATS connection", ErrInvalidOptions)
	}
	if run != "" {
		if err := messages.ValidName(run); err != nil {
			return nil, fmt.Errorf("%w: run: %v", ErrInvalidOptions, err)
		}
	}
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Threshold < 0 || o.Threshold > 1 || math.IsNaN(o.Threshold) {
		return nil, fmt.Errorf("%w: threshold %v, want 0 (default %v) or a ratio in (0, 1]", ErrInvalidOptions, o.Threshold, DefaultThreshold)
	}
	o.Threshold = thresholdOrDefault(o.Threshold)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Reporter{nc: nc, run: run, opts: o, log: o.Logger,
		updates: make(chan messages.RunReport, updatesBuffer),
		reports: map[string]messages.RunReport{}, runs: map[string]*runState{}}, nil
}

// Report returns the latest report built for run ("" means the reporter's
// own run), and whether there is one.
func (r *Reporter) Report(run string) (messages.RunReport, bool) {
	if run == "" {
		run = r.run
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rep, ok := r.reports[run]
	return rep, ok
}

// Updates returns a channel that receives each report as it is built. Sends
// never block: a report that finds the buffer full is not sent (Report has
// the latest). The channel is closed when Run returns.
func (r *Reporter) Updates() <-chan messages.RunReport { return r.updates }

// Stats returns the counters so far.
func (r *Reporter) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

func (r *Reporter) count(f func(*Stats)) {
	r.mu.Lock()
	f(&r.stats)
	r.mu.Unlock()
}

// keep stores a report and tells Updates about it.
func (r *Reporter) keep(rep messages.RunReport) {
	r.mu.Lock()
	r.reports[rep.Run] = rep
	r.stats.Reports++
	r.mu.Unlock()
	select {
	case r.updates <- rep:
	default:
	}
}
