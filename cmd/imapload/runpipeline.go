package main

import (
	"context"
	"errors"
	"io"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/pipeline"
	"github.com/imapload/imapload/ramp"
	"github.com/imapload/imapload/verdict"
	"github.com/nats-io/nats.go"
)

// errNoStep is a run that ended before any step finished, without saying
// why.
var errNoStep = errors.New("the run ended before any step finished")

// runPipeline runs the pipeline of o — what run and demo share — with the
// ramp's live progress and per-step lines on w (redrawn in place when tty),
// then prints the table, the verdict and the findings and writes the report
// files to r.Out ("" for none), saying where (the table wide with --wide). It returns the report, nil
// when no step finished (then the error says why), and the error of the
// files. The report's verdict, judged against crit, is the caller's exit
// code.
func runPipeline(ctx context.Context, w io.Writer, o *pipeline.Options, crit verdict.Criteria, r *rampFlags, tty bool) (*messages.RunReport, error) {
	o.Drive = func(ctx context.Context, nc *nats.Conn, ro *ramp.Options) ([]messages.StepResult, error) {
		return driveRamp(ctx, nc, ro, w, tty)
	}
	results, err := pipeline.Run(ctx, o)
	if len(results) == 0 {
		if err == nil {
			err = errNoStep
		}
		return nil, err
	}
	report := runReport(o.Run, results, o.Ramp.Plan.Threshold, crit, err)
	return &report, finish(w, r, report)
}
