package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/progress"
	"github.com/imapload/imapload/ramp"
	"github.com/imapload/imapload/reporter"
	"github.com/imapload/imapload/verdict"
	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func rampCmd(g *globalFlags) *cobra.Command {
	c := &rampConfig{Ramp: defaultRamp()}
	return bind(&cobra.Command{
		Use:   "ramp",
		Short: "Drive a run step by step against a deployed fleet until the knee",
		Long: `Publishes each step command (as a request, so it knows how many producers accepted),
shows live progress, waits for the step's result from the aggregator and stops one
step past the knee, at the first inconclusive step (saying why), at --max, or before
a rate more than --max-jump times the highest that held. --refine bisects between
the last step that held and the knee. Ends with the table, the verdict and, with
--out, the report files.

Exit codes: 0 a verdict was reached (a knee, or none up to the last step) and every
threshold passed; 1 the run could not be carried out; 2 impossible flags; 3 the server
is not answering correctly; 4 inconclusive (a step could not be measured before any
knee); 5 a threshold (--expect-knee-above, --max-p99, --max-error-rate) failed.`,
		Example: `  imapload ramp --run r1 --start 500 --step-duration 30s
  imapload ramp --run r2 --rates 1000,2000,3000,4000 --refine 3 --out report/
  imapload ramp --run ci --start 200 --expect-knee-above 1000 --max-p99 fetch=50ms --max-error-rate 0.01`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runRampCmd(cmd, c, g.logger(cmd)) },
	}, c)
}

// rampConfig is the configuration of `imapload ramp`.
type rampConfig struct {
	Run        string        // --run id, "" for ramp-<time>
	ResultWait time.Duration // --result-wait past a step's end for its result
	NATS       natsConfig
	Ramp       rampFlags
}

func (c *rampConfig) add(fs *pflag.FlagSet) {
	c.NATS.add(fs)
	c.Ramp.add(fs)
	fs.StringVar(&c.Run, "run", "", "run id (default: ramp-<time>)")
	fs.DurationVar(&c.ResultWait, "result-wait", time.Minute, "how long past a step's end to wait for its result")
}

func (c *rampConfig) validate() error {
	return errors.Join(
		flagErrors(c.NATS.checks(), c.Ramp.checks(), []error{checkDuration("result-wait", c.ResultWait)}),
		checkOut(c.Ramp.Out))
}

// rampFlags are the flags a ramp and the demo share.
type rampFlags struct {
	Start           float64       // --start: first offered rate, commands/s
	Factor          float64       // --factor: rate multiplier from step to step
	Max             float64       // --max: highest rate to offer, 0 for none
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
	Shape           shapeFlags
	Out             string // --out: directory for report files, "" for none
}

// defaultRamp is the flags' defaults; add declares the flags with the
// receiver's values as defaults, so the demo can start from its own.
func defaultRamp() rampFlags {
	return rampFlags{Start: 100, Factor: 2, MaxJump: ramp.DefaultMaxJump, MaxSteps: 12, AfterKnee: 1,
		Threshold: reporter.DefaultThreshold, StepDuration: 10 * time.Second}
}

func (r *rampFlags) add(fs *pflag.FlagSet) {
	fs.Float64Var(&r.Start, "start", r.Start, "first offered rate, commands/s")
	fs.Float64Var(&r.Factor, "factor", r.Factor, "rate multiplier from step to step")
	fs.Float64Var(&r.Max, "max", r.Max, "highest rate to offer (0: none)")
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
	r.Shape.add(fs)
	fs.StringVar(&r.Out, "out", r.Out, "directory for report files")
}

// checks returns the errors of the flags' values, nil for a good one.
func (r *rampFlags) checks() []error {
	return []error{
		checkInt("max-steps", r.MaxSteps, atLeast(1)),
		checkInt("after-knee", r.AfterKnee, atLeast(0)),
		checkInt("refine", r.Refine, atLeast(0)),
		checkFloat("threshold", r.Threshold, thresholdRule()),
		checkDuration("step-duration", r.StepDuration),
	}
}

// plan reads and checks the ramp flags; an impossible one is a usage
// error, found before anything is sent.
func (r *rampFlags) plan(run string) (ramp.Plan, messages.StepCommand, error) {
	p := ramp.Plan{Start: r.Start, Factor: r.Factor, Max: r.Max, MaxJump: r.MaxJump,
		MaxSteps: r.MaxSteps, AfterKnee: r.AfterKnee, Refine: r.Refine, Threshold: r.Threshold}
	rates, err := parseRates(r.Rates)
	if err != nil {
		return p, messages.StepCommand{}, usage(err)
	}
	p.Rates = rates
	t := messages.StepCommand{Run: run, Duration: messages.Duration(r.StepDuration)}
	if err := r.Shape.apply(&t); err != nil {
		return p, t, usage(err)
	}
	probe := t
	probe.Step, probe.Rate = 1, 1
	return p, t, usage(errors.Join(p.Validate(), probe.Validate()))
}

// criteria reads the threshold flags.
func (r *rampFlags) criteria() (verdict.Criteria, error) {
	c := verdict.Criteria{KneeAbove: r.ExpectKneeAbove}
	if !(c.KneeAbove >= 0) {
		return c, usage(fmt.Errorf("--expect-knee-above %v: want a rate ≥ 0", c.KneeAbove))
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

func runRampCmd(cmd *cobra.Command, c *rampConfig, log *slog.Logger) error {
	run := c.Run
	if run == "" {
		run = "ramp-" + time.Now().UTC().Format("20060102-150405")
	}
	plan, tmpl, err := c.Ramp.plan(run)
	if err != nil {
		return err
	}
	crit, err := c.Ramp.criteria()
	if err != nil {
		return err
	}
	nc, err := c.NATS.connect("imapload-ramp")
	if err != nil {
		return err
	}
	defer nc.Close()
	out := cmd.OutOrStdout()
	results, err := driveRamp(cmd.Context(), nc, &ramp.Options{Template: tmpl, Plan: plan, ResultWait: c.ResultWait, Bus: c.NATS.bus(), Logger: log}, out)
	if len(results) == 0 {
		return err
	}
	report := runReport(run, results, plan.Threshold, crit, err)
	return errors.Join(verdictError(report), finish(out, c.Ramp.Out, report))
}

// runReport builds a ramp's report, judges its thresholds, and makes a run
// cut short by an error (no result, no producer) inconclusive unless it had
// already found the knee.
func runReport(run string, results []messages.StepResult, threshold float64, crit verdict.Criteria, runErr error) messages.RunReport {
	report := reporter.Build(run, results, threshold, time.Now().UTC())
	report.Thresholds = crit.Check(report)
	if runErr == nil || report.Verdict == messages.RunKnee {
		return report
	}
	code := messages.ReasonNoResult
	if report.Verdict == messages.RunNoKnee {
		report.Verdict = messages.RunInconclusive
	}
	report.Reasons = append(report.Reasons, messages.Reason{Code: code, Detail: runErr.Error(), Remedy: verdict.Remedy(code)})
	return report
}

// driveRamp runs the controller with live progress on out, one summary line
// per finished step, and returns the results.
func driveRamp(ctx context.Context, nc *nats.Conn, o *ramp.Options, out io.Writer) ([]messages.StepResult, error) {
	tty := progress.IsTerminal(out)
	var (
		wg         sync.WaitGroup
		stopWatch  context.CancelFunc = func() {}
		watchMutex sync.Mutex
	)
	o.OnStep = func(cmd messages.StepCommand, replies []messages.StepReply) {
		fmt.Fprintf(out, "step %d: %.0f commands/s offered by %d producer(s) for %v\n", cmd.Step, cmd.Rate, ramp.Accepted(replies), cmd.Duration.D())
		// The live line runs until the window is over (plus a second for the
		// last batches), not for the whole wait for the result.
		wctx, cancel := context.WithTimeout(ctx, cmd.WarmupOrDefault()+cmd.Duration.D()+time.Second)
		watchMutex.Lock()
		stopWatch() // a step re-issued at once: its first command's watch ends
		stopWatch = cancel
		watchMutex.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = progress.Watch(wctx, nc, cmd, out, tty, 2*time.Second)
			if errors.Is(wctx.Err(), context.DeadlineExceeded) {
				fmt.Fprintf(out, "step %d: window over; waiting up to %v for its result from the aggregator (imapload aggregator)\n", cmd.Step, o.ResultWait)
			}
		}()
	}
	o.OnResult = func(r messages.StepResult) {
		watchMutex.Lock()
		stopWatch()
		watchMutex.Unlock()
		wg.Wait()
		fmt.Fprintln(out, summaryLine(r))
	}
	c, err := ramp.New(nc, o)
	if err != nil {
		return nil, usage(err)
	}
	results, err := c.Run(ctx)
	watchMutex.Lock()
	stopWatch()
	watchMutex.Unlock()
	wg.Wait()
	if err == nil {
		fmt.Fprintf(out, "ramp stopped: %s\n", c.Stopped())
	}
	return results, err
}

// summaryLine is a finished step: its figures, its verdict and, when it is
// inconclusive, why and what to do.
func summaryLine(r messages.StepResult) string {
	s := fmt.Sprintf("step %d done: target %.0f/s, delivered %.1f/s (%.0f%%): %s", r.Step, r.TargetRate, r.DeliveredRate, 100*r.Ratio, strings.ToUpper(r.Verdict))
	for _, x := range r.Reasons {
		s += fmt.Sprintf("\n    %s: %s\n    what to do: %s", x.Code, x.Detail, x.Remedy)
	}
	return s
}

// finish prints the table and writes the report files.
func finish(out io.Writer, dir string, report messages.RunReport) error {
	fmt.Fprintln(out)
	if err := reporter.RenderTable(out, report); err != nil {
		return err
	}
	if dir == "" {
		return nil
	}
	files, err := reporter.WriteFiles(dir, report)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nreport files: %s\n", strings.Join(files, ", "))
	return nil
}
