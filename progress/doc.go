// Package progress shows a step's live progress while it runs: elapsed versus
// duration, target versus delivered so far, errors and drops so far.
//
// It reads the same sample batches the aggregator reads, with a core NATS
// subscription on messages.StepSamplesFilter (JetStream-published messages are
// delivered to plain subscribers too), so it adds no load on the stream. The
// Tracker is pure; Watch is the thin network edge. On a terminal the line is
// redrawn in place, cut to the terminal's width so that it never wraps;
// otherwise a plain line is printed at each interval.
package progress
