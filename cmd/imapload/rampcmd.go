package main

import (
	"context"
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
	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
)

func rampCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ramp",
		Short: "Drive a run step by step against a deployed fleet until the knee",
		Long: `Publishes each step command (as a request, so it knows how many producers accepted),
shows live progress, waits for the step's result from the aggregator and stops one
step past the knee (or at --max). --refine bisects between the last step that held
and the knee. Ends with the table and, with --out, the report files.`,
		Example: `  imapload ramp --run r1 --start 500 --step-duration 30s
  imapload ramp --run r2 --rates 1000,2000,3000,4000 --refine 3 --out report/`,
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
	f.String("rates", "", "explicit comma-separated rates instead of --start/--factor")
	f.Int("max-steps", 12, "most steps to run")
	f.Int("after-knee", 1, "steps to run past the knee")
	f.Int("refine", 0, "bisection steps between the last step that held and the knee")
	f.Float64("threshold", reporter.DefaultThreshold, "delivered/target ratio under which a step is the knee")
	f.Duration("step-duration", 10*time.Second, "measurement window of each step")
	addShapeFlags(cmd)
	f.String("out", "", "directory for report files")
}

// rampPlan reads the ramp flags.
func rampPlan(cmd *cobra.Command, run string) (ramp.Plan, messages.StepCommand, error) {
	f := cmd.Flags()
	var p ramp.Plan
	p.Start, _ = f.GetFloat64("start")
	p.Factor, _ = f.GetFloat64("factor")
	p.Max, _ = f.GetFloat64("max")
	p.MaxSteps, _ = f.GetInt("max-steps")
	p.AfterKnee, _ = f.GetInt("after-knee")
	p.Refine, _ = f.GetInt("refine")
	p.Threshold, _ = f.GetFloat64("threshold")
	rates, err := parseRates(flagString(cmd, "rates"))
	if err != nil {
		return p, messages.StepCommand{}, err
	}
	p.Rates = rates
	d, _ := f.GetDuration("step-duration")
	t := messages.StepCommand{Run: run, Duration: messages.Duration(d)}
	return p, t, readShape(cmd, &t)
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
	report := reporter.Build(run, results, plan.Threshold, time.Now().UTC())
	if rerr := finish(out, flagString(cmd, "out"), report); rerr != nil && err == nil {
		err = rerr
	}
	return err
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
		wctx, cancel := context.WithCancel(ctx)
		watchMutex.Lock()
		stopWatch = cancel
		watchMutex.Unlock()
		wg.Add(1)
		go func() { defer wg.Done(); _ = progress.Watch(wctx, nc, cmd, out, tty, 2*time.Second) }()
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
		return nil, err
	}
	results, err := c.Run(ctx)
	watchMutex.Lock()
	stopWatch()
	watchMutex.Unlock()
	wg.Wait()
	return results, err
}

func summaryLine(r messages.StepResult) string {
	s := fmt.Sprintf("step %d done: target %.0f/s, delivered %.1f/s (%.0f%%)", r.Step, r.TargetRate, r.DeliveredRate, 100*r.Ratio)
	if r.GeneratorSaturated {
		s += ", GENERATOR SATURATED (not a server measurement)"
	}
	if len(r.Missing) > 0 {
		s += fmt.Sprintf(", missing producers %v", r.Missing)
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
