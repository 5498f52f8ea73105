package messages

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// Caps on the JSON messages other than step commands; a larger one is
// refused unread.
const (
	MaxResultBytes = 8 << 20  // one step result or run report on a results subject
	MaxReplyBytes  = 64 << 10 // one producer's answer to a step command
)

// The JSON messages are decoded leniently about fields (unknown ones are
// allowed, so that a newer sender can add some) and strictly about values:
// each decoder validates what its readers rely on.

// ResultKind reads the kind of a message on a results subject:
// KindStepResult or KindRunReport. Anything else (malformed JSON, another
// kind, more than MaxResultBytes) is an error wrapping ErrInvalidResult; the
// kind is returned with it when there is one.
func ResultKind(data []byte) (string, error) {
	if len(data) > MaxResultBytes {
		return "", fmt.Errorf("%w: %d bytes, at most %d", ErrInvalidResult, len(data), MaxResultBytes)
	}
	var env struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return "", fmt.Errorf("%w: malformed JSON: %v", ErrInvalidResult, err)
	}
	if env.Kind != KindStepResult && env.Kind != KindRunReport {
		return env.Kind, fmt.Errorf("%w: kind %.40q, want %q or %q", ErrInvalidResult, env.Kind, KindStepResult, KindRunReport)
	}
	return env.Kind, nil
}

// DecodeResult decodes and validates a step result from a results subject.
// A run report (the other kind there) and anything malformed, oversized or
// out of range are errors wrapping ErrInvalidResult.
func DecodeResult(data []byte) (*StepResult, error) {
	r := new(StepResult)
	if err := decodeResultKind(data, KindStepResult, r); err != nil {
		return nil, err
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// DecodeRunReport decodes and validates a run report, from a results
// subject or a report.json file. A step result and anything malformed,
// oversized or out of range are errors wrapping ErrInvalidResult.
func DecodeRunReport(data []byte) (*RunReport, error) {
	rep := new(RunReport)
	if err := decodeResultKind(data, KindRunReport, rep); err != nil {
		return nil, err
	}
	if err := rep.Validate(); err != nil {
		return nil, err
	}
	return rep, nil
}

// decodeResultKind decodes data into v if its kind is kind.
func decodeResultKind(data []byte, kind string, v any) error {
	got, err := ResultKind(data)
	if err != nil {
		return err
	}
	if got != kind {
		return fmt.Errorf("%w: kind %q, want %q", ErrInvalidResult, got, kind)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalidResult, kind, err)
	}
	return nil
}

// Validate checks what the knee, the ramp and the report rely on: an error
// wrapping ErrInvalidResult names the first problem.
func (r *StepResult) Validate() error {
	switch {
	case r.Kind != KindStepResult:
		return fmt.Errorf("%w: step result: kind %.40q", ErrInvalidResult, r.Kind)
	case ValidName(r.Run) != nil:
		return fmt.Errorf("%w: step result: run: %v", ErrInvalidResult, ValidName(r.Run))
	case r.Step < 1 || r.Step > MaxStep:
		return fmt.Errorf("%w: step result: step %d, want 1..%d", ErrInvalidResult, r.Step, MaxStep)
	case !(r.TargetRate > 0) || r.DeliveredRate < 0 || r.Ratio < 0:
		return fmt.Errorf("%w: step %d: target %v, delivered %v, ratio %v: want target > 0, the others ≥ 0",
			ErrInvalidResult, r.Step, r.TargetRate, r.DeliveredRate, r.Ratio)
	case r.Revision < 0:
		return fmt.Errorf("%w: step %d: revision %d, want ≥ 0", ErrInvalidResult, r.Step, r.Revision)
	case !(r.SessionRate >= 0) || !(r.TargetSessionRate >= 0):
		return fmt.Errorf("%w: step %d: sessions/s %v of %v: want ≥ 0", ErrInvalidResult, r.Step, r.SessionRate, r.TargetSessionRate)
	case len(r.Profile) > maxProfileName:
		return fmt.Errorf("%w: step %d: profile of %d bytes, at most %d", ErrInvalidResult, r.Step, len(r.Profile), maxProfileName)
	case len(r.Script) > maxScriptText:
		return fmt.Errorf("%w: step %d: script of %d bytes, at most %d", ErrInvalidResult, r.Step, len(r.Script), maxScriptText)
	case setupError(r.Setup) != nil:
		return fmt.Errorf("%w: step %d: %v", ErrInvalidResult, r.Step, setupError(r.Setup))
	case r.Server != nil:
		return r.Server.Validate()
	}
	return nil
}

// maxProfileName bounds a result's profile name.
const maxProfileName = 64

// maxScriptText bounds a result's script: MaxScriptCommands names and LOGIN.
const maxScriptText = (MaxScriptCommands + 1) * (maxPhaseName + 1)

// Validate checks a run report and each of its steps: an error wrapping
// ErrInvalidResult names the first problem.
func (rep *RunReport) Validate() error {
	switch {
	case rep.Kind != KindRunReport:
		return fmt.Errorf("%w: run report: kind %.40q", ErrInvalidResult, rep.Kind)
	case ValidName(rep.Run) != nil:
		return fmt.Errorf("%w: run report: run: %v", ErrInvalidResult, ValidName(rep.Run))
	case !(rep.Threshold >= 0) || math.IsInf(rep.Threshold, 0):
		return fmt.Errorf("%w: run %s: threshold %v, want a finite ratio ≥ 0", ErrInvalidResult, rep.Run, rep.Threshold)
	case rep.Knee != nil && (rep.Knee.Step < 1 || rep.Knee.Step > MaxStep):
		return fmt.Errorf("%w: run %s: knee at step %d, want 1..%d", ErrInvalidResult, rep.Run, rep.Knee.Step, MaxStep)
	case rep.LastHeld != nil && (rep.LastHeld.Step < 1 || rep.LastHeld.Step > MaxStep):
		return fmt.Errorf("%w: run %s: last held step %d, want 1..%d", ErrInvalidResult, rep.Run, rep.LastHeld.Step, MaxStep)
	}
	for i := range rep.Steps {
		s := &rep.Steps[i]
		if err := s.Validate(); err != nil {
			return fmt.Errorf("run %s: %w", rep.Run, err)
		}
		if s.Run != rep.Run {
			return fmt.Errorf("%w: run %s: step %d is of run %q", ErrInvalidResult, rep.Run, s.Step, s.Run)
		}
	}
	return nil
}

// DecodeStepReply decodes and validates a producer's answer to a step
// command. Anything malformed, oversized or out of range is an error
// wrapping ErrInvalidReply.
func DecodeStepReply(data []byte) (*StepReply, error) {
	if len(data) > MaxReplyBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrInvalidReply, len(data), MaxReplyBytes)
	}
	r := new(StepReply)
	if err := json.Unmarshal(data, r); err != nil {
		return nil, fmt.Errorf("%w: malformed JSON: %v", ErrInvalidReply, err)
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// Validate checks a step reply: an error wrapping ErrInvalidReply lists
// every problem.
func (r *StepReply) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if err := ValidName(r.Producer); err != nil {
		bad("producer: %v", err)
	}
	if r.Run != "" && ValidName(r.Run) != nil {
		bad("run: %v", ValidName(r.Run))
	}
	if r.Step < 0 || r.Step > MaxStep {
		bad("step: %d, want 0 (unknown) or 1..%d", r.Step, MaxStep)
	}
	if !finiteIn(r.Rate, 0, MaxRate) || r.Producers < 0 {
		bad("rate %v commands/s, producers %d: out of range", r.Rate, r.Producers)
	}
	if r.Connections < 0 || r.Connections > MaxConnections {
		bad("connections %d: out of range", r.Connections)
	}
	if !finiteIn(r.DeliverRate, 0, MaxRate) {
		bad("deliver_rate %v deliveries/s: out of range", r.DeliverRate)
	}
	if r.Accepted && (r.Error != "" || len(r.Problems) > 0) {
		bad("accepted with an error: %.80q", r.Error)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInvalidReply, errors.Join(errs...))
}
