package messages_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
)

// TestParseStepCommandOwnTerms: a value of the wrong type is refused with
// the field, what it expects and what it got, never in Go's words (no
// "cannot unmarshal", struct or type names); each problem once.
func TestParseStepCommandOwnTerms(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string // the problems, all of them
	}{
		{"mix as a string", step(`"mix":"fetch"`),
			[]string{`mix: expected an object of command weights such as {"fetch":3,"select":1}, got a string ("fetch")`}},
		{"a weight as a string", step(`"mix":{"fetch":"x","select":1}`),
			[]string{`mix: "fetch": expected a number (its weight), got a string ("x")`}},
		{"step not whole", `{"run":"r1","step":1.5,"rate":10,"duration":"1s"}`,
			[]string{"step: expected a whole number from 1, got 1.5"}},
		{"run as a number", `{"run":5,"step":1,"rate":10,"duration":"1s"}`,
			[]string{`run: expected a run id such as "r1" (a string), got 5`}},
		{"rate as an array", `{"run":"r1","step":1,"rate":[10],"duration":"1s"}`,
			[]string{"rate: expected a number of commands per second, got an array ([10])"}},
		{"warmup as a number", step(`"warmup":5`),
			[]string{`warmup: expected a duration such as "30s" or "1m30s" (a string: a bare number's unit would be a guess), got 5`}},
		{"arrival as true", step(`"arrival":true`), []string{`arrival: expected "constant" or "poisson", got true`}},
		{"session rate as a string", `{"run":"r1","step":1,"duration":"1s","script":"login logout","session_rate":"30"}`,
			[]string{`session_rate: expected a number of sessions per second, got a string ("30")`}},
		{"deliver rate as a string", step(`"deliver_rate":"5/s"`),
			[]string{`deliver_rate: expected a number of deliveries per second, got a string ("5/s")`}},
		{"long value shortened", step(`"profile":["` + strings.Repeat("x", 80) + `"]`),
			[]string{`profile: expected a profile name such as "desktop", got an array (["` + strings.Repeat("x", 38) + `…)`}},
		{"several at once", `{"run":"r1","step":0,"rate":10,"duration":"1s","mix":"fetch","rat":3}`,
			[]string{`json: unknown field "rat"`, `mix: expected an object of command weights such as {"fetch":3,"select":1}, got a string ("fetch")`,
				"step: 0, want 1..1000000"}},
		{"not an object", `[1,2]`,
			[]string{`malformed JSON: expected an object such as {"run":"r1","step":1,"rate":100,"duration":"30s"}, got an array`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := messages.ParseStepCommand([]byte(tc.in))
			got := messages.StepProblems(err)
			if !slices.Equal(got, tc.want) {
				t.Errorf("ParseStepCommand(%.60s) problems =\n%q\nwant\n%q", tc.in, got, tc.want)
			}
			for _, goWords := range []string{"cannot unmarshal", "Go struct", "float64", "map[", "StepCommand"} {
				if err != nil && strings.Contains(err.Error(), goWords) {
					t.Errorf("ParseStepCommand(%.60s) error = %q, in Go's words (%q)", tc.in, err, goWords)
				}
			}
		})
	}
}
