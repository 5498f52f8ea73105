package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/imapload/imapload/health"
	"github.com/imapload/imapload/reporter"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func reporterCmd(g *globalFlags) *cobra.Command {
	c := &reporterConfig{}
	return bind(&cobra.Command{
		Use:   "reporter",
		Short: "Find the knee and render reports from the step results",
		Long: `Reads step results from the IMAPLOAD_RESULTS stream, finds the knee, publishes a RunReport
on imapload.results.<run> after each step, prints one line per step (the whole table
with --verbose; each run's table on exit) and writes report.json, report.csv,
report.txt, report.html and the plots to --out, logging where.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runReporter(cmd, c, g.logger(cmd)) },
	}, c)
}

// reporterConfig is the configuration of `imapload reporter`.
type reporterConfig struct {
	Run       string  // --run to report, "" for every run
	Out       string  // --out: directory for report files, "" for none
	Threshold float64 // --threshold: delivered/target ratio under which a step is the knee
	Table     bool    // --table: a line per step result and each run's table on stdout
	Verbose   bool    // --verbose: the whole table after every step result
	NATS      natsConfig
	Health    healthConfig
}

func (c *reporterConfig) add(fs *pflag.FlagSet) {
	c.NATS.add(fs)
	c.Health.add(fs)
	fs.StringVar(&c.Run, "run", "", "report this run only (default: every run, each in --out/<run>)")
	fs.StringVar(&c.Out, "out", "", "directory for report files (default: none)")
	fs.Float64Var(&c.Threshold, "threshold", reporter.DefaultThreshold, "delivered/target ratio under which a step is the knee")
	fs.BoolVar(&c.Table, "table", true, "print a line per step result and each run's table on exit (false: nothing on stdout)")
	fs.BoolVar(&c.Verbose, "verbose", false, "print the whole table after every step result instead")
}

func (c *reporterConfig) validate() error {
	return errors.Join(
		flagErrors(c.NATS.checks(), []error{checkFloat("threshold", c.Threshold, thresholdRule()), c.Health.check()}),
		checkOut(c.Out))
}

func runReporter(cmd *cobra.Command, c *reporterConfig, log *slog.Logger) error {
	nc, err := c.NATS.connect("imapload-reporter")
	if err != nil {
		return err
	}
	defer nc.Close()
	o := &reporter.Options{OutDir: c.Out, Threshold: c.Threshold, Verbose: c.Verbose, Bus: c.NATS.bus(), Logger: log}
	if c.Table {
		o.Out = cmd.OutOrStdout()
	}
	r, err := reporter.New(nc, c.Run, o)
	if err != nil {
		return err
	}
	stop, err := c.Health.start(cmd.Context(), &health.Options{Ready: natsReady(nc)}, log)
	if err != nil {
		return err
	}
	defer stop()
	log.Info("reporter: ready", "run", c.Run, "out", o.OutDir)
	where := cmd.OutOrStdout()
	if !c.Table {
		where = cmd.ErrOrStderr() // stdout stays empty
	}
	printReportDir(where, c, "rewritten after each step result")
	err = r.Run(cmd.Context())
	switch st := r.Stats(); {
	case st.WriteErrors > 0:
		printReportDir(where, c, fmt.Sprintf("%d of %d writes failed (see the log)", st.WriteErrors, st.Reports))
	case st.Reports > 0:
		printReportDir(where, c, "written")
	}
	return err
}

// printReportDir says where the report files go, "" without --out: the
// folder of the run, or one folder per run under --out.
func printReportDir(w io.Writer, c *reporterConfig, note string) {
	if c.Out == "" {
		return
	}
	dir, err := filepath.Abs(c.Out)
	if err != nil {
		dir = c.Out
	}
	if c.Run == "" {
		dir = filepath.Join(dir, "<run>")
	}
	fmt.Fprintf(w, "report files in %s (report.json, report.csv, report.txt, report.html, plots): %s\n", dir, note)
}
