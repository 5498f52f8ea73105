package messages

import "errors"

// Sentinel errors, checked with errors.Is. Messages carry the detail.
var (
	// ErrInvalidStep reports a step command that cannot be run as written.
	ErrInvalidStep = errors.New("messages: invalid step command")
	// ErrInvalidBatch reports a sample batch that is malformed, oversized or out of range.
	ErrInvalidBatch = errors.New("messages: invalid sample batch")
	// ErrInvalidSketch reports an encoded DDSketch that cannot be trusted.
	ErrInvalidSketch = errors.New("messages: invalid sketch")
	// ErrInvalidName reports a run or producer id that is not a single NATS subject token.
	ErrInvalidName = errors.New("messages: invalid name")
	// ErrUnknownPhase reports a phase name that imapload does not measure.
	ErrUnknownPhase = errors.New("messages: unknown phase")
	// ErrInvalidResult reports a message on a results subject (a step result
	// or a run report) that is malformed, oversized or out of range.
	ErrInvalidResult = errors.New("messages: invalid result")
	// ErrInvalidReply reports a producer's answer to a step command that is
	// malformed, oversized or out of range.
	ErrInvalidReply = errors.New("messages: invalid step reply")
	// ErrInvalidServer reports an observer's server figures that are
	// malformed, oversized or out of range.
	ErrInvalidServer = errors.New("messages: invalid server figures")
)
