package messages

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The server's own figures: what `imapload observe` scraped from the
// server's metrics endpoints (node_exporter, Dovecot's OpenMetrics listener,
// the embedded test server) during a step's measurement window. An observer
// publishes two ServerFigures per step, JSON in the stream ServerStream on
// ServerSubject: an announcement when the step starts (Final false, no
// figures), so that the aggregator knows to wait for it, and the figures
// when the window ends. The aggregator attaches them to the step's result
// (StepResult.Server).
const (
	// ServerStream is the JetStream stream that keeps the observers' figures.
	ServerStream = "IMAPLOAD_SERVER"
	// ServerSubjects is the subject filter of ServerStream.
	ServerSubjects = "imapload.server.>"
	// KindServerFigures is the kind of a ServerFigures message.
	KindServerFigures = "server_figures"
	// MaxServerBytes caps one ServerFigures message; a larger one is refused unread.
	MaxServerBytes = 256 << 10
	// MaxEndpoints bounds the endpoints of one observer.
	MaxEndpoints = 16
	// MaxFigures bounds the figures of one endpoint.
	MaxFigures = 128
)

// Bounds of the strings of server figures.
const (
	maxURLText    = 512
	maxFigureName = 128
	maxErrorText  = 512
)

// Kinds of Figure.
const (
	// FigureRate is a counter's increase per second over the window
	// (counter resets handled); Min and Max are the lowest and highest rate
	// between two successive scrapes.
	FigureRate = "rate"
	// FigureGauge is a gauge's mean over the window's scrapes; Min and Max
	// are the lowest and highest value scraped.
	FigureGauge = "gauge"
	// FigureMean is one counter's increase over another's (Dovecot's
	// duration of all events over their number: the mean duration of one
	// event, in seconds); Min and Max are per interval between scrapes.
	FigureMean = "mean"
)

// Figure is one figure derived from an endpoint over a step's window. Its
// name carries its unit, as Prometheus names do: node_cpu_busy_cores,
// node_disk_read_bytes_per_second, dovecot_logins_duration_seconds. A
// metric named with `--metric NAME` keeps its name.
type Figure struct {
	// Name names the figure, unit included.
	Name string `json:"name"`
	// Kind is FigureRate, FigureGauge or FigureMean.
	Kind string `json:"kind"`
	// Value is the rate over the window, the gauge's mean, or the mean.
	Value float64 `json:"value"`
	// Min and Max bound Value's kind over the window (see the kinds).
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// EndpointFigures is what one endpoint gave during one step's window.
type EndpointFigures struct {
	// Observer is the observer that scraped it, set when the aggregator
	// attaches the figures to a result.
	Observer string `json:"observer,omitempty"`
	// URL is the endpoint, its password (if any) redacted.
	URL string `json:"url"`
	// Scrapes counts the scrapes of the window that succeeded; Failed those
	// that did not (refused, timed out, an HTTP error, text that does not
	// parse). A failed scrape leaves no silent gap: it is counted here.
	Scrapes int `json:"scrapes"`
	Failed  int `json:"failed"`
	// Error is the last failure, "" when none.
	Error string `json:"error,omitempty"`
	// Covered is the time from the first to the last successful scrape:
	// the part of the window the rates cover.
	Covered Duration `json:"covered"`
	// Omitted counts the figures and series one scrape left out at the
	// observer's caps (most in any scrape); 0 when none.
	Omitted int `json:"omitted,omitempty"`
	// Figures are the derived figures, sorted by name.
	Figures []Figure `json:"figures"`
}

// Figure returns the figure called name, if the endpoint has it.
func (e *EndpointFigures) Figure(name string) (Figure, bool) {
	i := slices.IndexFunc(e.Figures, func(f Figure) bool { return f.Name == name })
	if i < 0 {
		return Figure{}, false
	}
	return e.Figures[i], true
}

// ServerFigures is one observer's message about one step, JSON on
// ServerSubject(run, step, observer).
type ServerFigures struct {
	// Kind is KindServerFigures.
	Kind string `json:"kind"`
	// Run, Step and Observer say whose figures these are.
	Run      string `json:"run"`
	Step     int    `json:"step"`
	Observer string `json:"observer"`
	// Final is false for the announcement at the start of the step (the
	// endpoints listed, no figures yet) and true for the figures.
	Final bool `json:"final"`
	// StoppedEarly is true when the window was cut short (another step
	// began, or the observer stopped): the figures cover only part of it.
	StoppedEarly bool `json:"stopped_early,omitempty"`
	// Interval is the time between scrapes; Window is the measurement window.
	Interval Duration `json:"interval"`
	Window   Duration `json:"window"`
	// Endpoints are the endpoints in the order they were given.
	Endpoints []EndpointFigures `json:"endpoints"`
}

// ServerResult is the server's figures attached to a step's result
// (StepResult.Server).
type ServerResult struct {
	// Observers lists the observers whose figures are attached, sorted.
	Observers []string `json:"observers"`
	// Missing lists the observers that announced the step but whose
	// figures had not arrived when the result was published, sorted.
	Missing []string `json:"missing,omitempty"`
	// StoppedEarly lists the observers whose window was cut short.
	StoppedEarly []string `json:"stopped_early,omitempty"`
	// Endpoints are every attached observer's endpoints, by observer.
	Endpoints []EndpointFigures `json:"endpoints"`
}

// Rounded returns a copy of s, sharing nothing with it, with every figure
// rounded to 4 significant digits.
func (s *ServerResult) Rounded() *ServerResult {
	if s == nil {
		return nil
	}
	c := *s
	c.Observers, c.Missing, c.StoppedEarly = slices.Clone(s.Observers), slices.Clone(s.Missing), slices.Clone(s.StoppedEarly)
	c.Endpoints = slices.Clone(s.Endpoints)
	for i := range c.Endpoints {
		figs := slices.Clone(c.Endpoints[i].Figures)
		for j := range figs {
			figs[j].Value, figs[j].Min, figs[j].Max = sig(figs[j].Value, 4), sig(figs[j].Min, 4), sig(figs[j].Max, 4)
		}
		c.Endpoints[i].Figures = figs
	}
	return &c
}

// ServerSubject is where observer publishes its figures of one step:
// "imapload.server.<run>.<step>.<observer>".
func ServerSubject(run string, step int, observer string) string {
	return serverPrefix + run + "." + strconv.Itoa(step) + "." + observer
}

// StepServerFilter matches every observer's figures of one step.
func StepServerFilter(run string, step int) string {
	return serverPrefix + run + "." + strconv.Itoa(step) + ".>"
}

const serverPrefix = "imapload.server."

// ServerMsgID is the JetStream message id of an observer's announcement
// (final false) or figures of one step, "server-<run>-<step>-<observer>-0"
// or "…-1", escaped as BatchMsgID escapes, so that a retried publish is
// stored once.
func ServerMsgID(run string, step int, observer string, final bool) string {
	seq := uint64(0)
	if final {
		seq = 1
	}
	return "server-" + BatchMsgID(run, step, observer, seq)
}

// DecodeServerFigures decodes and validates an observer's message. Anything
// malformed, oversized or out of range is an error wrapping ErrInvalidServer.
func DecodeServerFigures(data []byte) (*ServerFigures, error) {
	if len(data) > MaxServerBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrInvalidServer, len(data), MaxServerBytes)
	}
	f := new(ServerFigures)
	if err := json.Unmarshal(data, f); err != nil {
		return nil, fmt.Errorf("%w: malformed JSON: %v", ErrInvalidServer, err)
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// Validate checks an observer's message: an error wrapping
// ErrInvalidServer names the first problem.
func (f *ServerFigures) Validate() error {
	switch {
	case f.Kind != KindServerFigures:
		return fmt.Errorf("%w: kind %.40q, want %q", ErrInvalidServer, f.Kind, KindServerFigures)
	case ValidName(f.Run) != nil:
		return fmt.Errorf("%w: run: %v", ErrInvalidServer, ValidName(f.Run))
	case ValidName(f.Observer) != nil:
		return fmt.Errorf("%w: observer: %v", ErrInvalidServer, ValidName(f.Observer))
	case f.Step < 1 || f.Step > MaxStep:
		return fmt.Errorf("%w: step %d, want 1..%d", ErrInvalidServer, f.Step, MaxStep)
	case f.Interval < 0 || f.Window < 0:
		return fmt.Errorf("%w: interval %v, window %v: want ≥ 0", ErrInvalidServer, f.Interval, f.Window)
	}
	return validEndpoints(f.Endpoints, MaxEndpoints)
}

// Validate checks the server figures of a step result: an error wrapping
// ErrInvalidResult names the first problem.
func (s *ServerResult) Validate() error {
	var errs []error
	for _, names := range [][]string{s.Observers, s.Missing, s.StoppedEarly} {
		if len(names) > MaxEndpoints*MaxEndpoints {
			errs = append(errs, fmt.Errorf("%d observers", len(names)))
		}
		for _, n := range names {
			errs = append(errs, ValidName(n))
		}
	}
	errs = append(errs, validEndpoints(s.Endpoints, MaxEndpoints*MaxEndpoints))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: server figures: %w", ErrInvalidResult, err)
	}
	return nil
}

// validEndpoints checks at most max endpoints and their figures.
func validEndpoints(eps []EndpointFigures, max int) error {
	if len(eps) > max {
		return fmt.Errorf("%w: %d endpoints, at most %d", ErrInvalidServer, len(eps), max)
	}
	for i := range eps {
		if err := eps[i].validate(); err != nil {
			return fmt.Errorf("%w: endpoint %d: %w", ErrInvalidServer, i+1, err)
		}
	}
	return nil
}

func (e *EndpointFigures) validate() error {
	switch {
	case e.URL == "" || len(e.URL) > maxURLText:
		return fmt.Errorf("url of %d bytes, want 1..%d", len(e.URL), maxURLText)
	case e.Observer != "" && ValidName(e.Observer) != nil:
		return fmt.Errorf("observer: %w", ValidName(e.Observer))
	case e.Scrapes < 0 || e.Failed < 0 || e.Omitted < 0 || e.Covered < 0:
		return fmt.Errorf("scrapes %d, failed %d, omitted %d, covered %v: want ≥ 0", e.Scrapes, e.Failed, e.Omitted, e.Covered)
	case len(e.Error) > maxErrorText:
		return fmt.Errorf("error of %d bytes, at most %d", len(e.Error), maxErrorText)
	case len(e.Figures) > MaxFigures:
		return fmt.Errorf("%d figures, at most %d", len(e.Figures), MaxFigures)
	}
	for _, f := range e.Figures {
		if err := f.validate(); err != nil {
			return err
		}
	}
	return nil
}

func (f Figure) validate() error {
	switch {
	case f.Name == "" || len(f.Name) > maxFigureName || strings.ContainsFunc(f.Name, badNameRune):
		return fmt.Errorf("figure name %.40q: want 1..%d characters of [A-Za-z0-9_:]", f.Name, maxFigureName)
	case f.Kind != FigureRate && f.Kind != FigureGauge && f.Kind != FigureMean:
		return fmt.Errorf("figure %s: kind %.20q, want %s, %s or %s", f.Name, f.Kind, FigureRate, FigureGauge, FigureMean)
	}
	return nil
}

// badNameRune reports a rune a Prometheus metric name may not hold.
func badNameRune(r rune) bool {
	return !(r == '_' || r == ':' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z'))
}
