package pipeline

import "errors"

// Errors of Run.
var (
	// ErrOptions reports options no pipeline can run.
	ErrOptions = errors.New("pipeline: bad options")
	// ErrProducers reports producers that did not register in time.
	ErrProducers = errors.New("pipeline: producers did not register")
	// ErrRole reports a role that stopped with an error during the run.
	ErrRole = errors.New("pipeline: a role failed")
)
