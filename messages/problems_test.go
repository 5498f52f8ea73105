package messages_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/imapload/imapload/messages"
)

// TestStepProblemsEachOnItsOwn: an unknown field is listed beside the other
// problems, and each problem is an item (a reply's "problems").
func TestStepProblemsEachOnItsOwn(t *testing.T) {
	_, err := messages.ParseStepCommand([]byte(`{"run":"","step":0,"rat":5,"duration":"1s","zz":1}`))
	if !errors.Is(err, messages.ErrInvalidStep) {
		t.Fatalf("messages.ParseStepCommand() error = %v, want messages.ErrInvalidStep", err)
	}
	got := messages.StepProblems(err)
	want := []string{`json: unknown field "rat"`, `json: unknown field "zz"`, "run: missing", "step: 0, want 1..1000000",
		"rate: 0 commands/s, want > 0 and ≤ 1e+07"}
	if !slices.Equal(got, want) {
		t.Errorf("messages.StepProblems() =\n%q\nwant\n%q", got, want)
	}
	if got := messages.StepProblems(fmt.Errorf("%w: malformed JSON: x", messages.ErrInvalidStep)); !slices.Equal(got, []string{"malformed JSON: x"}) {
		t.Errorf("messages.StepProblems(malformed) = %q, want one item", got)
	}
	if messages.StepProblems(nil) != nil {
		t.Errorf("messages.StepProblems(nil) != nil")
	}
}
