package reporter

import (
	"fmt"

	"github.com/imapload/imapload/messages"
)

// DecodeResult reads one message from a results subject with the contract's
// decoders (messages.ResultKind, messages.DecodeResult). It returns the
// message's kind and, for messages.KindStepResult, the validated step
// result; for messages.KindRunReport the result is nil. Anything else
// (malformed JSON, an unknown kind, an out-of-range field) is an error
// wrapping ErrInvalidResult and messages.ErrInvalidResult. Unknown fields
// are allowed, so that a newer aggregator can add some.
func DecodeResult(data []byte) (kind string, res *messages.StepResult, err error) {
	kind, err = messages.ResultKind(data)
	if err == nil && kind == messages.KindStepResult {
		res, err = messages.DecodeResult(data)
	}
	if err != nil {
		return kind, nil, fmt.Errorf("%w: %w", ErrInvalidResult, err)
	}
	return kind, res, nil
}
