package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
)

// A step command's value of the wrong type is refused in the command's own
// terms: the field, what it expects, and what it got, quoted as typed.

// fieldExpects says, by JSON field, what a step command's field expects.
// A field without an entry is described by its Go kind (see kindExpects).
var fieldExpects = map[string]string{
	"run":                  `a run id such as "r1" (a string)`,
	"step":                 "a whole number from 1",
	"rate":                 "a number of commands per second",
	"producer_rate":        "a number of commands per second",
	"session_rate":         "a number of sessions per second",
	"deliver_rate":         "a number of deliveries per second",
	"producers":            "a whole number of producers",
	"connections":          "a whole number of connections",
	"producer_connections": "a whole number of connections",
	"mix":                  `an object of command weights such as {"fetch":3,"select":1}`,
	"fetch_target":         fmt.Sprintf("%q or %q", FetchRandom, FetchRecent),
	"arrival":              fmt.Sprintf("%q or %q", ArrivalConstant, ArrivalPoisson),
	"script":               `a string of commands such as "login select fetch logout"`,
	"profile":              `a profile name such as "desktop"`,
}

// maxQuoted bounds how much of a value a problem quotes.
const maxQuoted = 40

// fieldError is the problem of field name, whose value raw failed to
// decode with err.
func fieldError(name string, raw json.RawMessage, err error) error {
	var ute *json.UnmarshalTypeError
	switch {
	case errors.Is(err, errNotDuration):
		return fmt.Errorf("%s: %v", name, err)
	case !errors.As(err, &ute):
		return fmt.Errorf("%s: %v", name, err)
	case name == "mix" && jsonKind(raw) == "an object":
		return weightError(raw)
	}
	want, ok := fieldExpects[name]
	if !ok {
		want = kindExpects(ute.Type)
	}
	return fmt.Errorf("%s: expected %s, got %s", name, want, got(raw))
}

// got describes a JSON value for a problem: a number as written, anything
// else by its kind and (shortened) text, e.g. `a string ("fetch")`.
func got(raw json.RawMessage) string {
	text := string(bytes.TrimSpace(raw))
	if len(text) > maxQuoted {
		text = text[:maxQuoted] + "…"
	}
	kind := jsonKind(raw)
	if kind == "a number" || kind == "true or false" || kind == "null" {
		return text
	}
	return kind + " (" + text + ")"
}

// jsonKind names the kind of the JSON value b: "a string", "a number",
// "an object", "an array", "true or false", "null".
func jsonKind(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "true or false"
	case 'n':
		return "null"
	}
	return "a number"
}

// kindExpects describes what a Go type decodes from.
func kindExpects(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64, reflect.Uint32:
		return "a whole number"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a " + t.Kind().String()
}

// weightError names the weights of the mix object raw that are not
// numbers.
func weightError(raw json.RawMessage) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("mix: %v", err)
	}
	var errs []error
	for _, phase := range slices.Sorted(maps.Keys(m)) {
		var w float64
		if json.Unmarshal(m[phase], &w) != nil {
			errs = append(errs, fmt.Errorf("mix: %q: expected a number (its weight), got %s", phase, got(m[phase])))
		}
	}
	if len(errs) == 0 { // not reached: a weight failed to decode
		return errors.New(`mix: expected an object of command weights such as {"fetch":3,"select":1}`)
	}
	return errors.Join(errs...)
}
