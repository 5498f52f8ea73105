package reporter

import (
	"encoding/json"
	"fmt"

	"github.com/imapload/imapload/messages"
)

// MaxResultBytes bounds one message on a results subject; a larger one is
// refused unread.
const MaxResultBytes = 8 << 20

// DecodeResult reads one message from a results subject. It returns the
// message's kind and, for messages.KindStepResult, the validated step result;
// for messages.KindRunReport the result is nil. Anything else (malformed
// JSON, an unknown kind, an out-of-range field) is an error wrapping
// ErrInvalidResult. Unknown fields are allowed, so that a newer aggregator can
// add some.
func DecodeResult(data []byte) (kind string, res *messages.StepResult, err error) {
	if len(data) > MaxResultBytes {
		return "", nil, fmt.Errorf("%w: %d bytes, at most %d", ErrInvalidResult, len(data), MaxResultBytes)
	}
	var env struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return "", nil, fmt.Errorf("%w: malformed JSON: %v", ErrInvalidResult, err)
	}
	switch env.Kind {
	case messages.KindRunReport:
		return env.Kind, nil, nil
	case messages.KindStepResult:
	default:
		return env.Kind, nil, fmt.Errorf("%w: kind %.40q, want %q or %q", ErrInvalidResult, env.Kind, messages.KindStepResult, messages.KindRunReport)
	}
	res = new(messages.StepResult)
	if err := json.Unmarshal(data, res); err != nil {
		return env.Kind, nil, fmt.Errorf("%w: step result: %v", ErrInvalidResult, err)
	}
	if err := validateStep(res); err != nil {
		return env.Kind, nil, err
	}
	return env.Kind, res, nil
}

// validateStep checks what the knee and the report rely on.
func validateStep(s *messages.StepResult) error {
	if err := messages.ValidName(s.Run); err != nil {
		return fmt.Errorf("%w: step result: run: %v", ErrInvalidResult, err)
	}
	if s.Step < 1 || s.Step > messages.MaxStep {
		return fmt.Errorf("%w: step result: step %d, want 1..%d", ErrInvalidResult, s.Step, messages.MaxStep)
	}
	if !(s.TargetRate > 0) || s.DeliveredRate < 0 || s.Ratio < 0 {
		return fmt.Errorf("%w: step %d: target %v, delivered %v, ratio %v: want target > 0, the others ≥ 0",
			ErrInvalidResult, s.Step, s.TargetRate, s.DeliveredRate, s.Ratio)
	}
	if s.Revision < 0 {
		return fmt.Errorf("%w: step %d: revision %d, want ≥ 0", ErrInvalidResult, s.Step, s.Revision)
	}
	return nil
}
