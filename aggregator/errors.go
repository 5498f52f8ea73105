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
	// ErrNoConn reports New called without a NATS connection.
	ErrNoConn = errors.New("aggregator: no NATS connection")
)
