package reporter

import "errors"

// Sentinel errors, checked with errors.Is. Messages carry the detail.
var (
	// ErrInvalidOptions reports a bad argument to New.
	ErrInvalidOptions = errors.New("reporter: invalid options")
	// ErrInvalidResult reports a message on a results subject that is not a
	// valid step result or run report.
	ErrInvalidResult = errors.New("reporter: invalid result")
	// ErrWrite reports a report file that could not be written.
	ErrWrite = errors.New("reporter: write files")
	// ErrConsume reports that the results stream could not be read.
	ErrConsume = errors.New("reporter: consume results")
)
