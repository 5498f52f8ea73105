package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/reporter"
)

func tailCmd() *cobra.Command {
	c := &tailConfig{}
	return bind(&cobra.Command{
		Use:   "tail",
		Short: "Print a run's step results as they are published, then its table and verdict",
		Long: `Reads the step results of --run from the IMAPLOAD_RESULTS stream, from the first, and
prints one line per step (a step re-opened by late batches is printed again with its
revision). It follows new results until interrupted, or until --idle passes without
one; with --once it stops at the last stored result. Then it prints the run's table
and verdict, judged from the steps' latest revisions at --threshold (no reporter
needed), and exits as the ramp does: 0 verdict, 3 failing, 4 inconclusive.`,
		Example: `  imapload tail --run r1
  imapload tail --run r1 --once   # what is stored now, then the table`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runTail(cmd, c) },
	}, c)
}

// tailConfig is the configuration of `imapload tail`.
type tailConfig struct {
	Run       string        // --run to follow (required)
	Once      bool          // --once: stop at the last stored result
	Idle      time.Duration // --idle: stop after this long without a result, 0 for never
	Threshold float64       // --threshold: delivered/target ratio under which a step is the knee
	NATS      natsConfig
}

func (c *tailConfig) add(fs *pflag.FlagSet) {
	c.NATS.add(fs)
	fs.StringVar(&c.Run, "run", "", "the run to follow (required)")
	fs.BoolVar(&c.Once, "once", false, "stop at the last stored result instead of following")
	fs.DurationVar(&c.Idle, "idle", 0, "stop after this long without a new result (0: follow until interrupted)")
	fs.Float64Var(&c.Threshold, "threshold", reporter.DefaultThreshold, "delivered/target ratio under which a step is the knee")
}

func (c *tailConfig) validate() error {
	return flagErrors(c.NATS.checks(), []error{
		checkDuration("idle", c.Idle),
		checkFloat("threshold", c.Threshold, thresholdRule()),
	})
}

func runTail(cmd *cobra.Command, c *tailConfig) error {
	run := c.Run
	if run == "" {
		return usage(errors.New(`required flag "run" not set: which run to follow`))
	}
	if err := messages.ValidName(run); err != nil {
		return usage(fmt.Errorf("--run: %w", err))
	}
	nc, err := c.NATS.connect("imapload-tail")
	if err != nil {
		return err
	}
	defer nc.Close()
	t := &tailer{out: cmd.OutOrStdout(), steps: map[int]messages.StepResult{}}
	err = t.follow(cmd.Context(), nc, run, c.Once, c.Idle)
	if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return err
	}
	if len(t.steps) == 0 {
		return fmt.Errorf("no step result of run %s on %s; is an aggregator (imapload aggregator) running?", run, messages.ResultsSubject(run))
	}
	steps := slices.Collect(maps.Values(t.steps))
	rep := reporter.Build(run, steps, c.Threshold, time.Now())
	fmt.Fprintln(t.out)
	if err := reporter.RenderTable(t.out, rep); err != nil {
		return err
	}
	return verdictError(rep)
}

// tailer prints step results as they come and keeps each step's latest
// revision.
type tailer struct {
	out   io.Writer
	steps map[int]messages.StepResult
}

// follow reads run's results from the first until ctx ends, idle passes
// without one, or (once) none is pending.
func (t *tailer) follow(ctx context.Context, nc *nats.Conn, run string, once bool, idle time.Duration) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	oc, err := js.OrderedConsumer(ctx, messages.ResultsStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{messages.ResultsSubject(run)},
	})
	if err != nil {
		return fmt.Errorf("tail: results of run %s: %w", run, err) // ErrStreamNotFound: no aggregator has run
	}
	last := time.Now()
	for ctx.Err() == nil && (idle <= 0 || time.Since(last) < idle) {
		batch, err := oc.Fetch(64, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return fmt.Errorf("tail: %w", err)
		}
		n, pending := 0, uint64(0)
		for m := range batch.Messages() {
			n++
			if md, err := m.Metadata(); err == nil {
				pending = md.NumPending
			}
			t.add(m.Data())
		}
		if err := batch.Error(); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, nats.ErrTimeout) {
			return fmt.Errorf("tail: %w", err)
		}
		if n > 0 {
			last = time.Now()
		}
		if once && pending == 0 {
			return nil
		}
	}
	return nil
}

// add prints a step result and keeps it if it is the step's latest
// revision; run reports and malformed messages are skipped.
func (t *tailer) add(data []byte) {
	kind, res, err := reporter.DecodeResult(data)
	if err != nil || kind != messages.KindStepResult {
		return
	}
	if old, ok := t.steps[res.Step]; ok && old.Revision > res.Revision {
		return
	}
	t.steps[res.Step] = *res
	fmt.Fprintln(t.out, res.Summary())
}
