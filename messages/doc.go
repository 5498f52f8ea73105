// Package messages is imapload's wire contract: the plain, documented data that
// producers, the aggregator, the reporter and operators exchange over NATS.
//
// Nothing else of imapload meets anything else except through these types on
// these subjects:
//
//   - Step commands ([StepCommand], JSON) on the core subject [StepSubject]
//     ("imapload.step"). An operator types them with `nats pub`; producers answer
//     requests with a [StepReply], and refuse a published command that has no
//     reply subject on [StepRefusedSubject] ("imapload.step.refused").
//   - Sample batches ([SampleBatch], msgpack) in the JetStream stream
//     [SamplesStream] on [SamplesSubject] ("imapload.samples.<run>.<step>.<producer>"),
//     published with the message id [BatchMsgID] so that retries deduplicate.
//   - Results ([StepResult] and [RunReport], JSON) on [ResultsSubject]
//     ("imapload.results.<run>"), kept in the stream [ResultsStream].
//   - The producer registry ([ProducerInfo], JSON) in the KV bucket [ProducersBucket].
//
// Latencies travel as whole microseconds; results report milliseconds. Every
// decoder of untrusted input here is bounded and validates what it decoded:
// [DecodeBatch], [DecodeSketch], [ParseStepCommand], [DecodeResult],
// [DecodeRunReport], [DecodeStepReply]. msgpack v5.4.1 pre-allocates whatever
// length a slice header claims, so every slice in a batch has a decoder of its
// own that refuses lengths above the documented caps; the hand-written,
// bounded msgpack and sketch decoding they call lives below this package, in
// messages/internal/wire, which tells why.
//
// The package imports no other imapload package (but its own wire codec) and
// no NATS client.
package messages
