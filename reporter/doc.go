// Package reporter turns the step results of a run into a report people can
// read: where the server stopped keeping up (the knee), how latency grew on
// the way, and what cannot be trusted.
//
// # The knee
//
// The rules live in package verdict. [Build] judges every step at the
// report's threshold ([DefaultThreshold], 0.9): held, below, or inconclusive
// with reasons (failing, incomplete, rate_mismatch, generator_saturated,
// host_overloaded, generator_stalled). [FindKnee] considers steps in
// ascending offered (target) rate, then step number; inconclusive steps are
// listed as invalid and are never the knee nor the last held step. The knee
// is the first valid step below the threshold (a ratio exactly at it holds),
// given as a range when inconclusive steps lie between the last held step
// and it. A later step that holds again does not move the knee: it is the
// first dip, and a finding says the series was not monotone. The run's
// verdict (knee, no_knee, inconclusive, failing) and its reasons come from
// verdict.Conclude.
//
// # Pure core
//
// [Build] makes a messages.RunReport from step results (sorted steps, knee,
// last held, invalid steps, the run's verdict and plain-language findings,
// which describe before they explain and never rest on an inconclusive step:
// bimodal phases,
// producers departing from the pool, the error of averaging per-producer
// P99s, saturated or incomplete steps, the top errors at the knee). The
// renderers are func(io.Writer, messages.RunReport) error: [RenderTable] (a
// fixed-width terminal table that fits [TableWidth] columns), [RenderWideTable]
// (every column, each note on one line: report.txt), [RenderJSON] and
// [RenderCSV]. [StepLine] is the line a ramp prints as each step finishes;
// [WriteTable] with StepLinesAbove follows those lines. A terminal is told
// each remedy once: later mentions refer back to it. [PlotThroughput]
// and [PlotLatency] draw with gonum.org/v1/plot; [WritePlots] and
// [WriteFiles] write report.json, report.csv, report.txt, report.html (one
// self-contained page with the plots inline), throughput.png/.svg and
// latency.png/.svg. None of this needs NATS.
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
// includes, also carried in the header [CoversHeader]. It publishes a run's
// report whenever its newest result is beyond the highest sequence any run
// report on the stream covers, whatever order reports and results were stored
// in, so the latest report always goes out; a restarted reporter publishes
// none whose results are already covered (and the stream would deduplicate
// the same id within its duplicate window anyway). A report larger than the
// connection's max payload is published
// without per-producer breakdowns, or without steps; the files always hold
// everything.
package reporter
