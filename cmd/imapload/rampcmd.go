package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
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
a rate more than --max-jump times the highest that held. When the first step already
falls below, it steps down instead (divided by --factor, down to --min) until a rate
holds, so the run ends with a bracket, or says that no rate down to --min held.
--refine bisects between the last step that held and the knee, after re-offering
the last rate that held (after a --cooldown at no load) to see that the server
recovered from the overload; a re-offer that falls below ends the run, saying so. With --connections it is a connection ramp:
every step offers the fixed --rate while the producers hold the next count of
logged-in IDLE connections (RFC 2177); a step is below when the rate falls under
--threshold or fewer connections are held, or new ones start failing. Ends with the table, the verdict and, with
--out, the report files.

Exit codes: 0 a verdict was reached (a knee, or none up to the last step) and every
threshold passed; 1 the run could not be carried out; 2 impossible flags; 3 the server
is not answering correctly; 4 inconclusive (a step could not be measured before any
knee); 5 a threshold (--expect-knee-above, --max-p99, --max-error-rate) failed;
6 no rate held, down to --min.`,
		Example: `  imapload ramp --run r1 --start 500 --step-duration 30s
  imapload ramp --run r2 --rates 1000,2000,3000,4000 --refine 3 --out report/
  imapload ramp --run c1 --connections 1000,2000,4000,8000 --rate 200 --stagger 10s --step-duration 30s
  imapload ramp --run ci --start 200 --expect-knee-above 1000 --max-p99 fetch=50ms --max-error-rate 0.01`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runRampCmd(cmd, c, g.logger(cmd)) },
	}, c)
}

// rampConfig is the configuration of `imapload ramp`.
type rampConfig struct {
	Run        string        // --run id, "auto" for a fresh one
	ResultWait time.Duration // --result-wait past a step's end for its result
	NATS       natsConfig
	Ramp       rampFlags
}

func (c *rampConfig) add(fs *pflag.FlagSet) {
	c.NATS.add(fs)
	c.Ramp.add(fs)
	fs.StringVar(&c.Run, "run", "auto", "run id; one that has results is refused (auto: ramp-<time>-<random>, a fresh one)")
	fs.DurationVar(&c.ResultWait, "result-wait", time.Minute, "how long past a step's end to wait for its result")
}

func (c *rampConfig) validate() error {
	return errors.Join(
		flagErrors(c.NATS.checks(), c.Ramp.checks(), []error{checkDuration("result-wait", c.ResultWait)}),
		checkOut(c.Ramp.Out))
}

func runRampCmd(cmd *cobra.Command, c *rampConfig, log *slog.Logger) error {
	run := runID(c.Run, "ramp")
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
	results, err := driveRamp(cmd.Context(), nc, &ramp.Options{Template: tmpl, Plan: plan, ResultWait: c.ResultWait, Cooldown: c.Ramp.Cooldown, Bus: c.NATS.bus(), Logger: log}, out, progress.IsTerminal(out))
	if len(results) == 0 {
		return err
	}
	report := runReport(run, results, plan.Threshold, crit, err)
	return errors.Join(verdictError(report), finish(out, &c.Ramp, report))
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

// driveRamp runs the controller with live progress on out (redrawn in
// place when tty), one summary line per finished step, and returns the
// results.
func driveRamp(ctx context.Context, nc *nats.Conn, o *ramp.Options, out io.Writer, tty bool) ([]messages.StepResult, error) {
	var (
		wg         sync.WaitGroup
		stopWatch  context.CancelFunc = func() {}
		watchMutex sync.Mutex
	)
	o.OnStep = func(cmd messages.StepCommand, replies []messages.StepReply) {
		fmt.Fprintf(out, "step %d: %.0f commands/s%s offered by %d producer(s) for %v\n", cmd.Step, cmd.Rate, heldWords(cmd.Connections), ramp.Accepted(replies), cmd.Duration.D())
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
	o.OnCooldown = func(step int, d ramp.Decision, wait time.Duration) {
		fmt.Fprintf(out, "step %d: cooling down for %v at no offered load first (%s)\n", step, wait, cooldownWords(d))
	}
	var done []messages.StepResult // the steps whose lines were printed, for StepLine
	o.OnResult = func(r messages.StepResult) {
		watchMutex.Lock()
		stopWatch()
		watchMutex.Unlock()
		wg.Wait()
		fmt.Fprintln(out, reporter.StepLine(r, done))
		done = append(done, r)
	}
	c, err := ramp.New(nc, o)
	if err != nil {
		return nil, usage(err)
	}
	results, err := c.Run(ctx)
	if errors.Is(err, ramp.ErrRunUsed) {
		err = usage(err) // refused before any load: a flag to change
	}
	watchMutex.Lock()
	stopWatch()
	watchMutex.Unlock()
	wg.Wait()
	if err == nil {
		fmt.Fprintf(out, "ramp stopped: %s\n", c.Stopped())
	}
	return results, err
}

// cooldownWords says why a step is cooled down for.
func cooldownWords(d ramp.Decision) string {
	switch d.Kind {
	case ramp.KindDown:
		return fmt.Sprintf("the step before fell below; searching down at %.4g/s", d.Rate)
	case ramp.KindRecheck:
		return fmt.Sprintf("the step before fell below; re-offering %.4g/s, the highest rate that held, to see that the server recovered before bisecting", d.Rate)
	}
	return fmt.Sprintf("the step before fell below; the next midpoint is %.4g/s", d.Rate)
}

// heldWords names a step's held connections, "" when it holds none.
func heldWords(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" and %d held IDLE connections", n)
}

// finish prints the table (wide with --wide), after the step lines the
// ramp printed, and writes the report files to --out, saying where.
func finish(out io.Writer, r *rampFlags, report messages.RunReport) error {
	fmt.Fprintln(out)
	if err := reporter.WriteTable(out, report, &reporter.TableOptions{Wide: r.Wide, StepLinesAbove: true}); err != nil {
		return err
	}
	if r.Out == "" {
		return nil
	}
	files, err := reporter.WriteFiles(r.Out, report)
	printWritten(out, "report files", r.Out, files)
	return err
}
