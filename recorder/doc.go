// Package recorder accumulates one producer's measurements of one step and
// cuts them into messages.SampleBatch values.
//
// Per phase it keeps exact attempted, succeeded and dropped counts, error
// counts by normalized kind (see Normalize), a uniform reservoir of latencies
// (Algorithm R) together with the exact count it was drawn from, and a DDSketch
// of every latency. Recording is cheap (accumulate in Record, derive once in
// Cut), safe for concurrent use, and needs neither NATS nor IMAP, so anyone can
// build batches with it: the producer does, and so do the aggregator's tests.
//
// Each Cut returns the deltas since the previous one and starts afresh: the
// step's totals are the sums over its batches. Why counts travel with the
// samples: a fixed-size sample without its
// count cannot be pooled without bias.
package recorder
