package main

import (
	"github.com/imapload/imapload/reporter"
	"github.com/spf13/cobra"
)

func reporterCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reporter",
		Short: "Find the knee and render reports from the step results",
		Long: `Reads step results from the IMAPLOAD_RESULTS stream, finds the knee, publishes a RunReport
on imapload.results.<run> after each step, prints one line per step (the whole table
with --verbose; each run's table on exit) and writes report.json, report.csv,
report.txt, report.html and the plots to --out, logging where.`,
		Args: cobra.NoArgs,
		RunE: runReporter,
	}
	addNATSFlags(cmd)
	cmd.Flags().String("run", "", "report this run only (default: every run, each in --out/<run>)")
	cmd.Flags().String("out", "", "directory for report files (default: none)")
	cmd.Flags().Float64("threshold", reporter.DefaultThreshold, "delivered/target ratio under which a step is the knee")
	cmd.Flags().Bool("table", true, "print a line per step result and each run's table on exit (false: nothing on stdout)")
	cmd.Flags().Bool("verbose", false, "print the whole table after every step result instead")
	return cmd
}

func runReporter(cmd *cobra.Command, _ []string) error {
	nc, err := connectNATS(cmd, "imapload-reporter")
	if err != nil {
		return err
	}
	defer nc.Close()
	o := &reporter.Options{OutDir: flagString(cmd, "out"), Bus: busOptions(cmd), Logger: logger(cmd)}
	o.Threshold, _ = cmd.Flags().GetFloat64("threshold")
	if table, _ := cmd.Flags().GetBool("table"); table {
		o.Out = cmd.OutOrStdout()
	}
	o.Verbose, _ = cmd.Flags().GetBool("verbose")
	r, err := reporter.New(nc, flagString(cmd, "run"), o)
	if err != nil {
		return err
	}
	o.Logger.Info("reporter: ready", "run", flagString(cmd, "run"), "out", o.OutDir)
	return r.Run(cmd.Context())
}
