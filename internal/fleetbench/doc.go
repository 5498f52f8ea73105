// Package fleetbench holds no code, only the fleet benchmark of issue 11 ("A
// fleet of hundreds"): one in-process nats-server with JetStream, the real
// aggregator in a process of its own, and N simulated producers, each on its
// own connection, with its entry in the producers bucket, answering the step
// request and publishing a batch cut by the real recorder every second.
//
//	go test ./internal/fleetbench -run '^$' -bench Fleet -benchtime 1x -count 3
//
// It reads and writes what a fleet does: the step command on
// messages.StepSubject ("imapload.step", kept in IMAPLOAD_STEPS), the
// producers bucket "imapload_producers", batches on
// "imapload.samples.<run>.<step>.<producer>" (IMAPLOAD_SAMPLES) and the
// results on "imapload.results.<run>". The figures are in BENCHMARKS.md ("A
// fleet of hundreds"); `go test` alone runs one small fleet as a check.
package fleetbench
