// Package reporter turns the step results of a run into a report people can
// read: where the server stopped keeping up (the knee), how latency grew on
// the way, and what cannot be trusted.
//
// # The knee
//
// [FindKnee] considers steps in ascending offered (target) rate, then step
// number. A step whose generator was saturated (StepResult.GeneratorSaturated)
// measured the load generator, not the server: it is listed as invalid,
// skipped, and never declared the knee. The knee is the first valid step whose
// delivered/target ratio is below the threshold ([DefaultThreshold], 0.9; a
// ratio exactly at the threshold holds). The last held step is the last valid
// step before the knee at or above the threshold. A later step that holds
// again does not move the knee: it is the first dip, and a finding says the
// series was not monotone.
//
// # Pure core
//
// [Build] makes a messages.RunReport from step results (sorted steps, knee,
// last held, invalid steps and plain-language findings: bimodal phases,
// producers departing from the pool, the error of averaging per-producer
// P99s, saturated or incomplete steps, the top errors at the knee). The
// renderers are func(io.Writer, messages.RunReport) error: [RenderTable] (a
// fixed-width terminal table), [RenderJSON] and [RenderCSV]. [PlotThroughput]
// and [PlotLatency] draw with gonum.org/v1/plot; [WritePlots] and
// [WriteFiles] write report.json, report.csv, report.txt, throughput.png/.svg
// and latency.png/.svg. None of this needs NATS.
//
// # Service
//
// [Reporter.Run] reads the JetStream stream messages.ResultsStream
// ("IMAPLOAD_RESULTS") through an ordered consumer filtered on
// messages.ResultsSubject(run) ("imapload.results.<run>"), or on
// "imapload.results.>" for a reporter of every run; it starts at the beginning
// of the stream, so a reporter that starts late still sees every result.
// It decodes step results (kind "step_result"), skips run reports (kind
// "run_report"), logs and counts anything else, and keeps the latest result of
// each step. Each time it has caught up with the stream it builds the
// report of every run that changed and publishes it as JSON (kind
// "run_report") on the same subject, with the JetStream message id
// "report-<run>-<n>", n being the stream sequence of the newest step result it
// includes. A restarted reporter rebuilds every report but publishes none whose
// results are already covered by a run report on the stream (and the stream
// would deduplicate the same id within its duplicate window anyway). A report larger than the connection's max payload is published
// without per-producer breakdowns, or without steps; the files always hold
// everything.
package reporter
