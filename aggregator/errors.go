package aggregator

import "errors"

// Sentinel errors, checked with errors.Is. Messages carry the detail.
var (
	// ErrWrongStep reports a batch added to the pool of another run or step.
	ErrWrongStep = errors.New("aggregator: batch of another step")
	// ErrInvalidBatch reports a batch the pool refuses: nil, failing
	// validation, or carrying a sketch that does not decode. It also wraps
	// messages.ErrInvalidBatch or messages.ErrInvalidSketch when one of those
	// is the cause.
	ErrInvalidBatch = errors.New("aggregator: invalid batch")
	// ErrRejected reports a batch that disagrees with its step's command:
	// another shape of step, counts beyond the command's rate, or batches
	// out of order with the producer's final one. RejectReason names why.
	ErrRejected = errors.New("aggregator: batch rejected")
	// ErrNoConn reports New called without a NATS connection.
	ErrNoConn = errors.New("aggregator: no NATS connection")

	// errConflicting reports a step command that differs from the one
	// already kept for its step; it is ignored.
	errConflicting = errors.New("aggregator: a different command for a step already commanded, ignored")
)
