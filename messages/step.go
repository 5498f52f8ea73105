package messages

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// Bounds of a step command. Anything outside is refused with a clear error.
const (
	MaxRate          = 1e7            // commands/s, fleet-wide or per producer
	MaxStep          = 1_000_000      // step numbers run from 1 to MaxStep
	MaxStepDuration  = 24 * time.Hour // longest measured step
	MaxWarmup        = time.Hour      // longest warm-up
	MaxStagger       = time.Hour      // longest stagger window
	MaxStepJSONBytes = 64 << 10       // a step command larger than this is refused unread
	MaxConnections   = 1_000_000      // held connections, fleet-wide or per producer
)

// Arrival processes a producer can schedule commands with.
const (
	ArrivalConstant = "constant" // evenly spaced: interval = 1/rate
	ArrivalPoisson  = "poisson"  // exponential gaps with mean 1/rate
)

// Messages a FETCH or body FETCH may be pinned to (StepCommand.FetchTarget).
const (
	FetchRandom = "random" // any message of INBOX, uniformly: a client reading old mail
	FetchRecent = "recent" // one of the newest messages of INBOX: a client opening new mail
)

// StepCommand asks every producer to offer one step of load. It is JSON that an
// operator can type:
//
//	nats pub imapload.step '{"run":"r1","step":1,"rate":1000,"duration":"30s"}'
//
// A step lasts Warmup + Duration. Only commands whose intended start falls in
// the last Duration (the measurement window) are measured.
type StepCommand struct {
	// Run names the run: 1–64 characters of [A-Za-z0-9_-]. Required.
	Run string `json:"run"`
	// Step numbers the step within the run, from 1.
	Step int `json:"step"`
	// Rate is the fleet-wide offered rate in scheduled IMAP commands per second.
	// Each producer offers Rate divided by the producers taking part (see ShareFor).
	Rate float64 `json:"rate"`
	// Duration is the length of the measurement window. Required, > 0, ≤ 24h.
	Duration Duration `json:"duration"`
	// Warmup is load offered before the measurement window and not measured.
	// Absent means DefaultWarmup.
	Warmup *Duration `json:"warmup,omitempty"`
	// Stagger is the window over which session starts are spread (no thundering
	// herd). Absent means DefaultStagger.
	Stagger *Duration `json:"stagger,omitempty"`
	// ProducerRate, when > 0, overrides the share: every producer offers this
	// many commands per second.
	ProducerRate float64 `json:"producer_rate,omitempty"`
	// Producers, when > 0, is the number of producers the fleet rate is divided
	// by, instead of the live producers each one sees in the registry.
	Producers int `json:"producers,omitempty"`
	// Mix overrides the workload: relative weights of scheduled commands by
	// phase name ("list", "select", "fetch", "store", "append", "logout",
	// and the client commands "status", "search_date", "search_header",
	// "body", "copy", "move", "expunge", "noop", "idle"; see Phase).
	Mix map[string]float64 `json:"mix,omitempty"`
	// FetchTarget is FetchRandom (default) or FetchRecent: which messages the
	// fetch and body phases read.
	FetchTarget string `json:"fetch_target,omitempty"`
	// Arrival is "constant" (default) or "poisson".
	Arrival string `json:"arrival,omitempty"`
	// Script, when set, fixes the shape of every session instead of drawing
	// single commands from Mix: e.g. "login select fetch logout" (see
	// ParseScript). The step then schedules whole sessions at Rate divided by
	// the script's commands, and results report sessions per second beside
	// commands per second.
	Script string `json:"script,omitempty"`
	// SessionRate, when > 0, offers the step in sessions (logins) per second,
	// fleet-wide, the unit imaptest reports; it needs a Script, and Rate is
	// then SessionRate × the script's commands (filled in when the command is
	// parsed; a Rate that disagrees is an error).
	SessionRate float64 `json:"session_rate,omitempty"`
	// Profile names a workload of one kind of client (see Profiles):
	// "imaptest", "desktop", "mobile" or "webmail". It supplies the mix or the
	// script, and the fetch target, that the command does not give itself.
	Profile string `json:"profile,omitempty"`
	// Connections is the fleet-wide number of logged-in connections to hold
	// open in IDLE (RFC 2177) beside the command rate, divided among
	// producers as Rate is (see ConnectionsFor). 0 holds none.
	Connections int `json:"connections,omitempty"`
	// ProducerConnections, when > 0, overrides the share: every producer
	// holds this many connections.
	ProducerConnections int `json:"producer_connections,omitempty"`
	// DeliverRate is the fleet-wide rate of messages delivered by LMTP (RFC
	// 2033) or SMTP to the step's accounts, in deliveries per second, beside
	// Rate and divided among producers as Rate is (see DeliverShareFor). 0
	// delivers none. It needs producers started with a delivery target
	// (--lmtp or --smtp).
	DeliverRate float64 `json:"deliver_rate,omitempty"`
}

// StepProblems returns each problem a step command's error lists (see
// ParseStepCommand and Validate), one per item, without the ErrInvalidStep
// prefix; an error that lists none is one problem.
func StepProblems(err error) []string {
	if err == nil {
		return nil
	}
	var out []string
	for _, e := range problems(err) {
		out = append(out, strings.TrimPrefix(e.Error(), ErrInvalidStep.Error()+": "))
	}
	return out
}

// problems are the errors err joins, without ErrInvalidStep.
func problems(err error) []error {
	return slices.DeleteFunc(leaves(err), func(e error) bool { return e == ErrInvalidStep })
}

// leaves returns the errors err joins, recursively; err itself if none.
func leaves(err error) []error {
	var many interface{ Unwrap() []error }
	if !errors.As(err, &many) {
		return []error{err}
	}
	var out []error
	for _, e := range many.Unwrap() {
		out = append(out, leaves(e)...)
	}
	return out
}

// Validate returns nil or an error wrapping ErrInvalidStep that lists every
// problem, one per line.
func (c StepCommand) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if c.Run == "" {
		bad("run: missing")
	} else if err := ValidName(c.Run); err != nil {
		bad("run: %v", err)
	}
	if c.Step < 1 || c.Step > MaxStep {
		bad("step: %d, want 1..%d", c.Step, MaxStep)
	}
	if rate := c.Normalized().Rate; !(rate > 0) || rate > MaxRate || math.IsInf(rate, 0) {
		bad("rate: %v commands/s, want > 0 and ≤ %g", rate, float64(MaxRate))
	}
	c.checkScript(bad)
	c.checkProfile(bad)
	checkDuration(bad, "duration", &c.Duration, true, MaxStepDuration)
	checkDuration(bad, "warmup", c.Warmup, false, MaxWarmup)
	checkDuration(bad, "stagger", c.Stagger, false, MaxStagger)
	if c.ProducerRate < 0 || c.ProducerRate > MaxRate || math.IsNaN(c.ProducerRate) {
		bad("producer_rate: %v commands/s, want 0 (unset) or up to %g", c.ProducerRate, float64(MaxRate))
	}
	if c.Producers < 0 || c.Producers > 100_000 {
		bad("producers: %d, want 0 (unset) or 1..100000", c.Producers)
	}
	if c.Connections < 0 || c.Connections > MaxConnections {
		bad("connections: %d, want 0 (none) up to %d", c.Connections, MaxConnections)
	}
	if c.ProducerConnections < 0 || c.ProducerConnections > MaxConnections {
		bad("producer_connections: %d, want 0 (unset) up to %d", c.ProducerConnections, MaxConnections)
	}
	if c.DeliverRate < 0 || c.DeliverRate > MaxRate || math.IsNaN(c.DeliverRate) || math.IsInf(c.DeliverRate, 0) {
		bad("deliver_rate: %v deliveries/s, want 0 (none) up to %g", c.DeliverRate, float64(MaxRate))
	}
	if c.Arrival != "" && c.Arrival != ArrivalConstant && c.Arrival != ArrivalPoisson {
		bad("arrival: %q, want %q or %q", c.Arrival, ArrivalConstant, ArrivalPoisson)
	}
	if c.FetchTarget != "" && c.FetchTarget != FetchRandom && c.FetchTarget != FetchRecent {
		bad("fetch_target: %q, want %q or %q", c.FetchTarget, FetchRandom, FetchRecent)
	}
	if c.Mix != nil {
		if err := ValidateMix(c.Mix); err != nil {
			bad("mix: %v", err)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInvalidStep, errors.Join(errs...))
}

func checkDuration(bad func(string, ...any), name string, d *Duration, required bool, max time.Duration) {
	switch {
	case d == nil && required:
		bad("%s: missing", name)
	case d == nil:
	case required && *d == 0:
		bad("%s: missing or zero, want e.g. \"30s\"", name)
	case *d < 0:
		bad("%s: %v is negative", name, d.D())
	case d.D() > max:
		bad("%s: %v is longer than %v", name, d.D(), max)
	}
}

// ValidateMix checks workload weights: known scheduled phases, finite
// non-negative weights, at least one positive.
func ValidateMix(mix map[string]float64) error {
	var errs []error
	sum := 0.0
	names := make([]string, 0, len(mix))
	for name := range mix {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		w := mix[name]
		p, err := ParsePhase(name)
		switch {
		case err != nil:
			errs = append(errs, err)
		case p == Deliver || p == Inbox:
			errs = append(errs, fmt.Errorf("%q is not an IMAP command: deliveries have a rate of their own, deliver_rate", name))
		case !p.Scheduled():
			errs = append(errs, fmt.Errorf("%q is session set-up, not a scheduled command", name))
		case w < 0 || math.IsNaN(w) || math.IsInf(w, 0):
			errs = append(errs, fmt.Errorf("%q weight %v, want a finite number ≥ 0", name, w))
		default:
			sum += w
		}
	}
	if len(errs) == 0 && !(sum > 0) {
		errs = append(errs, errors.New("no positive weight"))
	}
	return errors.Join(errs...)
}

// DefaultMix is the workload when a step names none, modelled on imaptest's
// default per-session mix (LIST 50, SELECT 100, FETCH 100 plus FETCH2 30,
// STORE 50, APPEND 5 per cycle), except that a session logs out on average
// every 18 commands instead of every cycle, so that most commands run on
// established sessions as real clients do.
func DefaultMix() map[string]float64 {
	return map[string]float64{"list": 50, "select": 100, "fetch": 130, "store": 50, "append": 10, "logout": 20}
}

// MixOrDefault returns c.Mix, or DefaultMix when the command names none.
func (c StepCommand) MixOrDefault() map[string]float64 {
	if c.Mix != nil {
		return c.Mix
	}
	return DefaultMix()
}

// StaggerOrDefault is c.Stagger, or the smaller of 2 s and a quarter of Duration.
func (c StepCommand) StaggerOrDefault() time.Duration {
	if c.Stagger != nil {
		return c.Stagger.D()
	}
	return min(2*time.Second, c.Duration.D()/4)
}

// WarmupOrDefault is c.Warmup, or the stagger window plus one second, at most
// half of Duration: by then every session has started.
func (c StepCommand) WarmupOrDefault() time.Duration {
	if c.Warmup != nil {
		return c.Warmup.D()
	}
	return min(c.StaggerOrDefault()+time.Second, c.Duration.D()/2)
}

// FetchTargetOrDefault is c.FetchTarget, or FetchRandom.
func (c StepCommand) FetchTargetOrDefault() string {
	if c.FetchTarget == "" {
		return FetchRandom
	}
	return c.FetchTarget
}

// ArrivalOrDefault is c.Arrival, or ArrivalConstant.
func (c StepCommand) ArrivalOrDefault() string {
	if c.Arrival == "" {
		return ArrivalConstant
	}
	return c.Arrival
}

// ShareFor is the rate one producer offers, in commands per second: the
// explicit ProducerRate if set; else Rate divided by Producers if set; else Rate
// divided by live, the producers registered when the step starts (at least 1).
func (c StepCommand) ShareFor(live int) float64 {
	switch {
	case c.ProducerRate > 0:
		return c.ProducerRate
	case c.Producers > 0:
		return c.Rate / float64(c.Producers)
	case live > 0:
		return c.Rate / float64(live)
	default:
		return c.Rate
	}
}

// ConnectionsFor is how many connections one producer holds: the explicit
// ProducerConnections if set; else Connections divided, rounded up, by
// Producers if set, else by live (at least 1), so that the fleet holds at
// least Connections.
func (c StepCommand) ConnectionsFor(live int) int {
	n := live
	if c.Producers > 0 {
		n = c.Producers
	}
	switch {
	case c.ProducerConnections > 0:
		return c.ProducerConnections
	case n > 1:
		return (c.Connections + n - 1) / n
	default:
		return c.Connections
	}
}

// StepReply is a producer's answer to a step command sent as a request
// (`nats req imapload.step '…' --replies 0`).
type StepReply struct {
	// Producer is the answering producer's id.
	Producer string `json:"producer"`
	// Run and Step echo the command, when it could be parsed.
	Run  string `json:"run,omitempty"`
	Step int    `json:"step,omitempty"`
	// Accepted is true when the producer will run the step.
	Accepted bool `json:"accepted"`
	// Error says why the command was refused; empty when accepted. Its
	// problems are joined by "; ".
	Error string `json:"error,omitempty"`
	// Problems lists each problem of a refused command on its own.
	Problems []string `json:"problems,omitempty"`
	// Rate is the producer's share of the offered rate, commands/s.
	Rate float64 `json:"rate,omitempty"`
	// Producers is the number of producers the fleet rate was divided by.
	Producers int `json:"producers,omitempty"`
	// Connections is the producer's share of the held connections.
	Connections int `json:"connections,omitempty"`
	// DeliverRate is the producer's share of the deliver rate, deliveries/s.
	DeliverRate float64 `json:"deliver_rate,omitempty"`
}

// ProducerInfo is a producer's entry in ProducersBucket, re-put as a heartbeat.
type ProducerInfo struct {
	// ID is the producer id (also the key).
	ID string `json:"id"`
	// Host is the host name the producer runs on.
	Host string `json:"host"`
	// PID is the producer's process id.
	PID int `json:"pid"`
	// Instance is drawn at random by each producer process at start, so
	// that two processes given one id are told apart (in the batches'
	// message ids too).
	Instance string `json:"instance,omitempty"`
	// Started is when the producer started (wall clock, UTC).
	Started time.Time `json:"started"`
	// Heartbeat is when this entry was written (wall clock, UTC).
	Heartbeat time.Time `json:"heartbeat"`
	// Target is the IMAP server address the producer loads ("host:port").
	Target string `json:"target"`
	// Run and Step are the step it is running, if any.
	Run  string `json:"run,omitempty"`
	Step int    `json:"step,omitempty"`
}
