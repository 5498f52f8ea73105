package main

import (
	"context"
	"errors"
	"fmt"
	"io"
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
)

func rampCmd() *cobra.Command {
	cmd := &cobra.Command{
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
		RunE: runRampCmd,
	}
	addNATSFlags(cmd)
	addRampFlags(cmd)
	cmd.Flags().String("run", "", "run id (default: ramp-<time>)")
	cmd.Flags().Duration("result-wait", time.Minute, "how long past a step's end to wait for its result")
	return cmd
}

// addRampFlags adds the flags a ramp and the demo share.
func addRampFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.Float64("start", 100, "first offered rate, commands/s")
	f.Float64("factor", 2, "rate multiplier from step to step")
	f.Float64("max", 0, "highest rate to offer (0: none)")
	f.Float64("max-jump", ramp.DefaultMaxJump, "never offer more than this many times the highest rate that held")
	f.String("rates", "", "explicit comma-separated rates instead of --start/--factor")
	f.Int("max-steps", 12, "most steps to run")
	f.Int("after-knee", 1, "steps to run past the knee (0: stop at it)")
	f.Int("refine", 0, "bisection steps between the last step that held and the knee")
	f.Float64("threshold", reporter.DefaultThreshold, "delivered/target ratio under which a step is the knee")
	f.Duration("step-duration", 10*time.Second, "measurement window of each step")
	f.Float64("expect-knee-above", 0, "fail (exit 5) unless the server held at this rate, commands/s, with no knee at or below it")
	f.StringArray("max-p99", nil, "fail (exit 5) if PHASE's response-time P99 exceeds DURATION on a held step, e.g. fetch=50ms (repeatable)")
	f.String("max-error-rate", "", "fail (exit 5) if failed/sent commands exceed this ratio on a held step, e.g. 0.01")
	addShapeFlags(cmd)
	f.String("out", "", "directory for report files")
}

// rampPlan reads and checks the ramp flags; an impossible one is a usage
// error, found before anything is sent.
func rampPlan(cmd *cobra.Command, run string) (ramp.Plan, messages.StepCommand, error) {
	f := cmd.Flags()
	var p ramp.Plan
	p.Start, _ = f.GetFloat64("start")
	p.Factor, _ = f.GetFloat64("factor")
	p.Max, _ = f.GetFloat64("max")
	p.MaxJump, _ = f.GetFloat64("max-jump")
	p.MaxSteps, _ = f.GetInt("max-steps")
	p.AfterKnee, _ = f.GetInt("after-knee")
	p.Refine, _ = f.GetInt("refine")
	p.Threshold, _ = f.GetFloat64("threshold")
	rates, err := parseRates(flagString(cmd, "rates"))
	if err != nil {
		return p, messages.StepCommand{}, usage(err)
	}
	p.Rates = rates
	d, _ := f.GetDuration("step-duration")
	t := messages.StepCommand{Run: run, Duration: messages.Duration(d)}
	if err := readShape(cmd, &t); err != nil {
		return p, t, usage(err)
	}
	probe := t
	probe.Step, probe.Rate = 1, 1
	return p, t, usage(errors.Join(p.Validate(), probe.Validate()))
}

// rampCriteria reads the threshold flags.
func rampCriteria(cmd *cobra.Command) (verdict.Criteria, error) {
	f := cmd.Flags()
	var c verdict.Criteria
	c.KneeAbove, _ = f.GetFloat64("expect-knee-above")
	if !(c.KneeAbove >= 0) {
		return c, usage(fmt.Errorf("--expect-knee-above %v: want a rate ≥ 0", c.KneeAbove))
	}
	limits, _ := f.GetStringArray("max-p99")
	for _, l := range limits {
		pl, err := parsePhaseLimit(l)
		if err != nil {
			return c, usage(err)
		}
		c.MaxP99 = append(c.MaxP99, pl)
	}
	if s := flagString(cmd, "max-error-rate"); s != "" {
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

func runRampCmd(cmd *cobra.Command, _ []string) error {
	run := flagString(cmd, "run")
	if run == "" {
		run = "ramp-" + time.Now().UTC().Format("20060102-150405")
	}
	plan, tmpl, err := rampPlan(cmd, run)
	if err != nil {
		return err
	}
	crit, err := rampCriteria(cmd)
	if err != nil {
		return err
	}
	nc, err := connectNATS(cmd, "imapload-ramp")
	if err != nil {
		return err
	}
	defer nc.Close()
	wait, _ := cmd.Flags().GetDuration("result-wait")
	out := cmd.OutOrStdout()
	results, err := driveRamp(cmd.Context(), nc, &ramp.Options{Template: tmpl, Plan: plan, ResultWait: wait, Bus: busOptions(cmd), Logger: logger(cmd)}, out)
	if len(results) == 0 {
		return err
	}
	report := runReport(run, results, plan.Threshold, crit, err)
	return errors.Join(verdictError(report), finish(out, flagString(cmd, "out"), report))
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
