package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// ParseStepCommand decodes and validates a step command. Unknown fields,
// trailing data and every out-of-range value are errors wrapping ErrInvalidStep;
// all problems are reported at once, each in the command's own terms: the
// field, what it expects and what it got ("mix: expected an object of
// command weights …, got a string ("fetch")"), never Go's type names.
func ParseStepCommand(b []byte) (StepCommand, error) {
	var c StepCommand
	if len(b) > MaxStepJSONBytes {
		return c, fmt.Errorf("%w: %d bytes, at most %d", ErrInvalidStep, len(b), MaxStepJSONBytes)
	}
	fields, err := stepObject(b)
	if err != nil {
		return c, err
	}
	errs, mistyped := c.decodeFields(fields)
	if slices.Contains(mistyped, "session_rate") {
		mistyped = append(mistyped, "rate") // derived from it
	}
	c.normalize()
	if err := c.Validate(); err != nil {
		for _, p := range problems(err) {
			if !slices.Contains(mistyped, problemField(p)) { // said once: as a type
				errs = append(errs, p)
			}
		}
	}
	if len(errs) == 0 {
		return c, nil
	}
	return c, fmt.Errorf("%w: %w", ErrInvalidStep, errors.Join(errs...))
}

// stepObject reads b as one JSON object, its fields not yet decoded.
func stepObject(b []byte) (map[string]json.RawMessage, error) {
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&fields); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return nil, fmt.Errorf(`%w: malformed JSON: expected an object such as {"run":"r1","step":1,"rate":100,"duration":"30s"}, got %s`,
				ErrInvalidStep, jsonKind(b))
		}
		return nil, fmt.Errorf("%w: malformed JSON: %v", ErrInvalidStep, err)
	}
	// Token, not More: More reports false before a stray '}' or ']'.
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: trailing data after the JSON object", ErrInvalidStep)
	}
	return fields, nil
}

// decodeFields sets c's fields from the object's, by their exact JSON
// names, and returns the problems: unknown fields (a typo such as "rat"
// would otherwise be ignored in silence) and values of the wrong type,
// whose names it also returns.
func (c *StepCommand) decodeFields(fields map[string]json.RawMessage) (errs []error, mistyped []string) {
	v := reflect.ValueOf(c).Elem()
	var typeErrs []error
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		i := slices.Index(stepFields, name)
		if i < 0 {
			errs = append(errs, fmt.Errorf("json: unknown field %q", name))
			continue
		}
		if err := json.Unmarshal(fields[name], v.Field(i).Addr().Interface()); err != nil {
			typeErrs = append(typeErrs, fieldError(name, fields[name], err))
			mistyped = append(mistyped, name)
		}
	}
	return append(errs, typeErrs...), mistyped
}

// stepFields are the JSON names of StepCommand's fields, in field order.
var stepFields = func() []string {
	var names []string
	t := reflect.TypeFor[StepCommand]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	return names
}()

// problemField is the field a problem of Validate names ("rate: …").
func problemField(err error) string {
	name, _, _ := strings.Cut(err.Error(), ":")
	return name
}
