// Package aggregator pools the sample batches of every producer into one
// messages.StepResult per step and publishes it.
//
// It has a pure core and a thin edge. The core, [Pool], needs no NATS: add
// messages.SampleBatch values, call [Pool.Result]. Anyone can pool batches
// offline with it. The edge, [Aggregator], consumes the batches from
// JetStream and publishes the results.
//
// # Subjects and streams
//
// The aggregator reads the stream IMAPLOAD_SAMPLES ("imapload.samples.>",
// msgpack batches on "imapload.samples.<run>.<step>.<producer>") through a
// durable pull consumer (Options.Durable, explicit acks). It also reads, with
// short-lived ordered consumers, the batches of one step (when it opens the
// step) and the results already published for a run.
//
// It publishes each StepResult as JSON (Content-Type application/json) on
// "imapload.results.<run>", kept in the stream IMAPLOAD_RESULTS, with the
// message id "result-<run>-<step>" (".r<revision>" appended after the first;
// [messages.ResultMsgID]). It creates or updates both
// streams with package bus at start.
//
// # What is pooled, and how
//
// Per phase, the reported percentiles (P50, P90, P99, P99.9) come from the
// producers' DDSketches merged bin by bin. Merging is lossless, so these
// figures are within the sketch's 0.5% relative accuracy of the exact
// percentiles of every latency, however unequal the producers are. Max is the
// larger of the sketch's top bin and the largest sampled value. Percentiles
// are never averaged, not across producers and not across batches.
//
// Each batch also carries, per phase, a uniform reservoir of k latencies drawn
// from the n it observed. Every (producer, batch) reservoir is a stratum, and
// each of its values weighs n/k. The weighted sample gives the "sample"
// percentiles, the Disagree check and the bimodality verdict. Past
// PoolOptions.MaxSample values per phase (default 262144), every reservoir is
// thinned in proportion, systematically and from a start fixed by its
// (producer, seq), so results stay reproducible. The pool keeps each batch's
// response reservoir until Result.
//
// The sample percentiles use DDSketch's definition of a quantile, with every
// value standing for its weight: the q-quantile is the first value whose
// cumulative weight exceeds q·(N−1), N the latencies observed. When every
// reservoir kept every value (n ≤ k, as with one-second batches) the weights
// are 1 and that is the ⌊q·(N−1)⌋-th order statistic from 0, the very one the
// merged sketch reads: the P99 of 69 latencies is the second largest, never
// the largest. Sketch and sample then differ only by the sketch's 0.5% and
// the reservoirs' rounding to whole microseconds.
//
// # Commands never sent
//
// The response-time percentiles are over every scheduled command of the
// window that was served or never sent: N = Count + Dropped, a command never
// sent counting as an unbounded response time. For quantile q, if q·N ≤ Count
// the percentile is the merged sketch's quantile at q·N/Count; otherwise it is
// only a lower bound: it reads as Max (the largest served response time) and
// is named in Above. NeverSent = Dropped/N. With nothing dropped nothing
// changes. Failed commands are in neither (they are counted as errors).
// Service-time percentiles are over the commands sent. The sample
// percentiles follow the same rule on the reservoirs.
//
// # Confidence intervals
//
// A percentile's interval is about the server's latency distribution (what
// another run of the same step would sample anew), not about the sketch's
// rounding. It is distribution-free: the order statistics [x₍ₗ₎, x₍ᵤ₎] of the N
// values, with l < u the shortest (then most central) pair of ranks with
// P(l ≤ B < u) ≥ 95%, B ~ Binomial(N, q) (exact sums while σ ≤ 1024, a normal
// approximation with continuity correction, one rank wider each side, beyond).
// The ranks are read off the merged sketch, interpolating by rank in log scale
// within a bin; the interval is not widened by the sketch's accuracy. A rank
// among the never-sent commands is unbounded above (+Inf, null in JSON) or,
// as a lower bound, Max. When no two-sided bound exists (1 − q^N − (1−q)^N <
// 0.95: P50 under N = 6, P90 under 29, P99 under 299, P99.9 under 2,995) the
// interval is the one-sided lower bound and an open upper one, and the
// percentile is named in TooFew. coverage_test.go checks, for lognormal,
// bimodal and Pareto-tailed distributions and N from 30 to 10⁶, that a
// two-sided interval covers the true quantile 93–97% of the time.
//
// A percentile is listed in Disagree when the sketch's value lies outside the
// reservoirs' own interval for it: a Wilson interval at Kish's effective
// sample size of the weighted sample, widened by the sketch's 0.5% and 1 µs.
// Percentiles in Above are skipped. Over 200 synthetic fleets, 3.1% of the
// percentiles disagreed by chance.
//
// # Bimodality
//
// A two-component Gaussian mixture is fitted to ln(latency). The data is the
// weighted sample in 5% bins; the fit is EM, started from the two-class split
// that maximizes the between-class variance (Otsu). A phase is bimodal when
// all three of these hold:
//
//   - Ashman's D = |μ₁−μ₂| / √((σ₁²+σ₂²)/2) exceeds 2;
//   - the sample itself dips between the means. Three windows of equal width
//     ((μ₂−μ₁)/4 in ln) are taken, centred on each mean and on the fitted
//     density's lowest point between them, and their weight is read as an
//     effective count (N_eff = (Σw)²/Σw²). The valley's count plus two
//     Poisson standard deviations must stay under 70% of either peak's
//     count minus two standard deviations. A fit alone is not enough: a
//     flat, skewed or sparse distribution can reach D > 2 without having a
//     second peak;
//   - each side of the valley holds at least 5% of the weight.
//
// Each mode's value is the weighted median of its side, with the side's share
// of the weight. Separation reports D. The rule was checked on samples of 100
// values: lognormal, exponential, Pareto-tailed and log-uniform samples were
// called bimodal in at most 1 of 100; a login mixture (cache hits ≈ 0.2 ms,
// bcrypt misses ≈ 60 ms) was called bimodal in 95 of 100 at a 10% hit rate,
// and in all 100 at 70%.
//
// # Per producer
//
// Each producer is shown beside the pool, never averaged into it. Count is its
// successful scheduled commands. P99 is taken from its scheduled phases'
// sketches merged together. A producer is Deviant when, with at least 100
// latencies, that P99 is over 2× or under ½ of the pooled P99 of the
// scheduled phases. When a phase's per-producer P99s differ by more than a
// factor of 2, AverageP99Fallacy gives (mean of per-producer P99s − pooled
// P99) / pooled P99 for that phase. SessionsMax sums each producer's highest
// reported session count. That is an upper bound of the true peak of the sum,
// and is exact when the producers peak together, as they do in a steady step.
//
// # Step commands
//
// Every step command published on "imapload.step" is kept in the stream
// IMAPLOAD_STEPS (NoAck, so a request still gets only the producers'
// replies; bounded in age, count and bytes), which producers, the ramp and
// the aggregator create. The aggregator reads it from its start with an
// ordered consumer and keeps, per (run, step), the first command that parses;
// a later, different one is ignored and counted. A step's rate, duration and
// warm-up are its command's, never a batch's. Every batch is checked against
// its step's command: the step must have one (a batch may wait, NAK'd, a few
// hundred milliseconds for a command still being read); its fleet rate,
// duration, warm-up and share must be the command's; its window must lie
// within the step's; a producer sends one final batch and nothing after it;
// its counts must stay within ten times what its share allows over the step,
// plus 10,000, and no sum may overflow. A batch that fails is terminated,
// logged (each kind of warning at most once per Options.WarnEvery, with a
// count) and counted per reason in StepResult.Rejected; it never opens or
// changes a step. At most Options.MaxOpenSteps steps are open at once; a
// batch of another step waits. A step's deadline counts from its earliest
// accepted batch.
//
// # Completion
//
// A step is complete once every producer that sent anything for it has sent
// its final batch, and every earlier batch of that producer is either in or
// reported lost (Health.Lost). Otherwise it is closed at its deadline:
//
//	time its first accepted batch was stored + warm-up + duration + Options.StepTimeout
//
// The stored time is the stream's clock, so a restart computes the same
// deadline. Producers without a final batch are then listed in Missing, and
// Complete is false. While the connection to NATS is down no step is closed,
// and after it comes back every step gets Options.StepTimeout more, counted
// from the reconnection: producers are publishing the batches they held
// through the outage.
//
// # Late batches and revisions
//
// A batch of a published step that was stored after the messages the result
// considered (StepResult.ThroughSeq) re-opens the step: it is replayed whole,
// stays open until every producer is done or Options.StepTimeout has passed,
// and is published again with StepResult.Revision one higher, if it pooled
// more batches than the result before. Late messages that add nothing (a
// duplicate, a refused batch) change nothing. Readers (the reporter) use each
// step's highest revision.
//
// # Verdict
//
// Each result is stamped by verdict.Stamp at verdict.DefaultThreshold: its
// Reasons and Verdict come from its own figures (the reporter and the ramp
// judge again at their own threshold). For them the pool adds OfferedRate,
// the producers' shares summed (each producer's from its first batch);
// StoppedEarly, the producers whose final batch ends before the window; and
// per producer the highest of its batches' health figures, taken over its
// lagging batches when it fell behind, with the LagCause they point to
// (verdict.LagCause).
//
// # Redelivery, corruption and restarts
//
// Batches are deduplicated on (run, step, producer, seq); a repeat is counted
// in Duplicates and pooled once. A redelivered stream message (same stream
// sequence) is not a duplicate: it is recognised and acknowledged again. A
// message that does not decode, is refused by the pool, or whose content does
// not match its subject is logged, counted in its step's Corrupt, and
// terminated.
//
// Restarting mid-step gives the same result because a step is always pooled
// from the stream itself. When the aggregator first meets a step, it replays
// every batch of that step stored so far, in stream order, including the ones
// a previous aggregator already acknowledged. It acknowledges each delivered
// message after merging it, except one per open step. That one, the anchor, is
// held unacknowledged until the step's result is published. The durable
// consumer therefore remembers every open step: after a restart the anchor is
// redelivered within Options.AckWait, even if nothing new arrives. The new
// aggregator then rebuilds the step by the same replay. The pool is
// insensitive to arrival order and to repeats, so the replay yields the same
// StepResult, apart from Generated.
//
// Before publishing for a run, the aggregator reads the results already in
// IMAPLOAD_RESULTS for it, and skips any step that has one, unless a batch
// stored after that result's ThroughSeq re-opens it. On top of that,
// the message id makes the stream drop a repeat within its 10-minute
// duplicate window. A fresh durable starts from the beginning of the samples
// stream, which keeps 24 hours. It publishes results for the steps that have
// none, and acknowledges the rest.
//
// One aggregator per durable: two running at once on the same durable would
// each pool part of a step.
package aggregator
