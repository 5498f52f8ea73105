package messages

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Duration is a time.Duration that reads and writes JSON as a Go duration
// string ("30s", "1m30s", "250ms"), the way an operator types it.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String formats d like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// errNotDuration is UnmarshalJSON's error for a value that is no duration
// string, said in a step command's terms (the field is put before it).
var errNotDuration = errors.New(`expected a duration such as "30s" or "1m30s"`)

// UnmarshalJSON reads a duration string such as "30s". A bare number is refused
// because its unit would be a guess.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("%w (a string: a bare number's unit would be a guess), got %s", errNotDuration, got(b))
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%w, got %s", errNotDuration, got(b))
	}
	*d = Duration(v)
	return nil
}
