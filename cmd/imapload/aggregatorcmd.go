package main

import (
	"github.com/imapload/imapload/aggregator"
	"github.com/spf13/cobra"
)

func aggregatorCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "aggregator",
		Short: "Pool every producer's sample batches into one result per step",
		Long: `Consumes the IMAPLOAD_SAMPLES stream with a durable consumer, pools each step's batches
(merged sketches, count-weighted reservoirs, errors by kind) and publishes a StepResult
as JSON on imapload.results.<run> once every producer sent its final batch or the step
timed out. A restarted aggregator resumes where it left off.`,
		Args: cobra.NoArgs,
		RunE: runAggregator,
	}
	addNATSFlags(cmd)
	cmd.Flags().Duration("step-timeout", 0, "wait past a step's end for missing final batches (default 15s)")
	cmd.Flags().String("durable", "", "durable consumer name (default imapload-aggregator)")
	return cmd
}

func runAggregator(cmd *cobra.Command, _ []string) error {
	nc, err := connectNATS(cmd, "imapload-aggregator")
	if err != nil {
		return err
	}
	defer nc.Close()
	o := &aggregator.Options{Durable: flagString(cmd, "durable"), Bus: busOptions(cmd), Logger: logger(cmd)}
	o.StepTimeout, _ = cmd.Flags().GetDuration("step-timeout")
	a, err := aggregator.New(nc, o)
	if err != nil {
		return err
	}
	o.Logger.Info("aggregator: ready")
	return a.Run(cmd.Context())
}
