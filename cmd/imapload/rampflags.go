package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/ramp"
	"github.com/imapload/imapload/reporter"
	"github.com/imapload/imapload/verdict"
	"github.com/spf13/pflag"
)

// rampFlags are the flags a ramp and the demo share.
type rampFlags struct {
	Start           float64       // --start: first offered rate, commands/s
	Factor          float64       // --factor: rate multiplier from step to step
	Max             float64       // --max: highest rate to offer, 0 for none
	Min             float64       // --min: floor of the downward search, commands/s
	Cooldown        time.Duration // --cooldown before a step after an overload; 0: one --step-duration
	MaxJump         float64       // --max-jump over the highest rate that held
	Rates           string        // --rates: explicit comma-separated rates
	MaxSteps        int           // --max-steps
	AfterKnee       int           // --after-knee: steps past the knee
	Refine          int           // --refine: bisection steps
	Threshold       float64       // --threshold: delivered/target ratio of the knee
	StepDuration    time.Duration // --step-duration: measurement window
	ExpectKneeAbove float64       // --expect-knee-above, commands/s
	MaxP99          []string      // --max-p99 PHASE=DURATION, repeatable
	MaxErrorRate    string        // --max-error-rate ratio, "" for none
	Connections     string        // --connections: a connection ramp's held connections, comma-separated
	Rate            float64       // --rate: a connection ramp's fixed rate, commands/s
	Shape           shapeFlags
	Unit            string // --unit of the rates: commands or sessions (per second)
	Out             string // --out: directory for report files, "" for none
	Wide            bool   // --wide: the table with every column, as in report.txt
}

// defaultRamp is the flags' defaults; add declares the flags with the
// receiver's values as defaults, so the demo can start from its own.
func defaultRamp() rampFlags {
	return rampFlags{Start: 100, Factor: 2, Min: ramp.DefaultMin, MaxJump: ramp.DefaultMaxJump, MaxSteps: 12, AfterKnee: 1,
		Threshold: reporter.DefaultThreshold, StepDuration: 10 * time.Second}
}

func (r *rampFlags) add(fs *pflag.FlagSet) {
	fs.Float64Var(&r.Start, "start", r.Start, "first offered rate, commands/s")
	fs.Float64Var(&r.Factor, "factor", r.Factor, "rate multiplier from step to step")
	fs.Float64Var(&r.Max, "max", r.Max, "highest rate to offer (0: none)")
	fs.Float64Var(&r.Min, "min", r.Min, "when the first step falls below, step down (divided by --factor) to this floor until a rate holds")
	fs.DurationVar(&r.Cooldown, "cooldown", r.Cooldown, "no load for this long before a step that follows one below at a lower rate (the downward search, the re-offer before --refine, a midpoint after one below); 0: one --step-duration, negative: none")
	fs.Float64Var(&r.MaxJump, "max-jump", r.MaxJump, "never offer more than this many times the highest rate that held")
	fs.StringVar(&r.Rates, "rates", r.Rates, "explicit comma-separated rates instead of --start/--factor")
	fs.IntVar(&r.MaxSteps, "max-steps", r.MaxSteps, "most steps to run")
	fs.IntVar(&r.AfterKnee, "after-knee", r.AfterKnee, "steps to run past the knee (0: stop at it)")
	fs.IntVar(&r.Refine, "refine", r.Refine, "bisection steps between the last step that held and the knee")
	fs.Float64Var(&r.Threshold, "threshold", r.Threshold, "delivered/target ratio under which a step is the knee")
	fs.DurationVar(&r.StepDuration, "step-duration", r.StepDuration, "measurement window of each step")
	fs.Float64Var(&r.ExpectKneeAbove, "expect-knee-above", r.ExpectKneeAbove, "fail (exit 5) unless the server held at this rate, commands/s, with no knee at or below it")
	fs.StringArrayVar(&r.MaxP99, "max-p99", r.MaxP99, "fail (exit 5) if PHASE's response-time P99 exceeds DURATION on a held step, e.g. fetch=50ms (repeatable)")
	fs.StringVar(&r.MaxErrorRate, "max-error-rate", r.MaxErrorRate, "fail (exit 5) if failed/sent commands exceed this ratio on a held step, e.g. 0.01")
	fs.StringVar(&r.Connections, "connections", r.Connections, "a connection ramp: IDLE connections to hold, fleet-wide, step by step (e.g. 1000,2000,4000), at the fixed --rate")
	fs.Float64Var(&r.Rate, "rate", r.Rate, "with --connections, the fixed command rate of every step, commands/s")
	r.Shape.add(fs)
	fs.StringVar(&r.Unit, "unit", "commands", "unit of --start, --max, --rates and --expect-knee-above: commands or sessions per second (sessions needs --script)")
	fs.StringVar(&r.Out, "out", r.Out, "directory for report files")
	fs.BoolVar(&r.Wide, "wide", r.Wide, "print the table with every column (sessions/s, P99.9), one line per note, as report.txt has it (default: it fits 120 columns)")
}

// checks returns the errors of the flags' values, nil for a good one.
func (r *rampFlags) checks() []error {
	return []error{
		checkInt("max-steps", r.MaxSteps, atLeast(1)),
		checkInt("after-knee", r.AfterKnee, atLeast(0)),
		checkInt("refine", r.Refine, atLeast(0)),
		checkFloat("threshold", r.Threshold, thresholdRule()),
		checkDuration("step-duration", r.StepDuration),
		checkFloat("min", r.Min, numericRule{min: 0, openMin: true}),
	}
}

// plan reads and checks the ramp flags; an impossible one is a usage
// error, found before anything is sent.
func (r *rampFlags) plan(run string) (ramp.Plan, messages.StepCommand, error) {
	p := ramp.Plan{Start: r.Start, Factor: r.Factor, Max: r.Max, Min: r.Min, MaxJump: r.MaxJump,
		MaxSteps: r.MaxSteps, AfterKnee: r.AfterKnee, Refine: r.Refine, Threshold: r.Threshold}
	rates, err := parseRates(r.Rates)
	if err != nil {
		return p, messages.StepCommand{}, usage(err)
	}
	p.Rates = rates
	if p.Connections, err = parseConnections(r.Connections); err != nil {
		return p, messages.StepCommand{}, usage(err)
	}
	if p.Rate = r.Rate; p.Rate != 0 && len(p.Connections) == 0 {
		return p, messages.StepCommand{}, usage(errors.New("--rate: only with --connections (a rate ramp takes --start or --rates)"))
	}
	t := messages.StepCommand{Run: run, Duration: messages.Duration(r.StepDuration)}
	if err := r.Shape.apply(&t); err != nil {
		return p, t, usage(err)
	}
	perSession, err := r.perSession(t)
	if err != nil {
		return p, t, usage(err)
	}
	p.Start, p.Max, p.Min = p.Start*perSession, p.Max*perSession, p.Min*perSession
	if r.Min == ramp.DefaultMin { // the default floor never refuses a first rate under it
		first := p.Start
		if len(p.Rates) > 0 {
			first = p.Rates[0] * perSession
		}
		p.Min = min(p.Min, first)
	}
	for i := range p.Rates {
		p.Rates[i] *= perSession
	}
	probe := t
	probe.Step, probe.Rate = 1, 1
	return p, t, usage(errors.Join(p.Validate(), probe.Validate()))
}

// perSession is the commands of one session when the ramp's rates are in
// sessions per second (--unit sessions, with --script), else 1: the ramp
// plans in commands per second.
func (r *rampFlags) perSession(t messages.StepCommand) (float64, error) {
	switch r.Unit {
	case "", "commands":
		return 1, nil
	case "sessions":
		sc := t.Normalized().ScriptOf()
		if sc == nil {
			return 0, errors.New("--unit sessions: needs a --script, or a --profile with one (each session runs it once)")
		}
		return float64(len(sc)), nil
	}
	return 0, fmt.Errorf("--unit %q: want commands or sessions", r.Unit)
}

// criteria reads the threshold flags.
func (r *rampFlags) criteria() (verdict.Criteria, error) {
	c := verdict.Criteria{KneeAbove: r.ExpectKneeAbove}
	if !(c.KneeAbove >= 0) {
		return c, usage(fmt.Errorf("--expect-knee-above %v: want a rate ≥ 0", c.KneeAbove))
	}
	var t messages.StepCommand
	if err := r.Shape.apply(&t); err == nil {
		if perSession, err := r.perSession(t); err == nil {
			c.KneeAbove *= perSession
		}
	}
	for _, l := range r.MaxP99 {
		pl, err := parsePhaseLimit(l)
		if err != nil {
			return c, usage(err)
		}
		c.MaxP99 = append(c.MaxP99, pl)
	}
	if s := r.MaxErrorRate; s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v >= 0 && v <= 1) {
			return c, usage(fmt.Errorf("--max-error-rate %q: want a ratio in [0, 1]", s))
		}
		c.MaxErrorRate = &v
	}
	return c, nil
}

// parsePhaseLimit reads one --max-p99 PHASE=DURATION.
func parsePhaseLimit(s string) (verdict.PhaseLimit, error) {
	name, ds, ok := strings.Cut(s, "=")
	if !ok {
		return verdict.PhaseLimit{}, fmt.Errorf("--max-p99 %q: want PHASE=DURATION, e.g. fetch=50ms", s)
	}
	if _, err := messages.ParsePhase(name); err != nil {
		return verdict.PhaseLimit{}, fmt.Errorf("--max-p99 %q: %w", s, err)
	}
	d, err := time.ParseDuration(ds)
	if err != nil || d <= 0 {
		return verdict.PhaseLimit{}, fmt.Errorf("--max-p99 %q: want a positive duration such as 50ms", s)
	}
	return verdict.PhaseLimit{Phase: name, Max: d}, nil
}

func parseRates(s string) ([]float64, error) {
	if s == "" {
		return nil, nil
	}
	var rates []float64
	for _, part := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || !(v > 0) || v > messages.MaxRate { // !(v > 0) also refuses NaN
			return nil, fmt.Errorf("--rates: %q is not a rate", part)
		}
		rates = append(rates, v)
	}
	return rates, nil
}

// parseConnections reads --connections: comma-separated counts.
func parseConnections(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || v < 1 || v > messages.MaxConnections {
			return nil, fmt.Errorf("--connections: %q is not a count of connections (1..%d)", part, messages.MaxConnections)
		}
		out = append(out, v)
	}
	return out, nil
}
