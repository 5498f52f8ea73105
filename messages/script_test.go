package messages_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
)

func TestParseScript(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    messages.Script
		wantErr string
	}{
		{in: "LOGIN SELECT FETCH LOGOUT", want: messages.Script{messages.Select, messages.Fetch, messages.Logout}},
		{in: "select,fetch, logout", want: messages.Script{messages.Select, messages.Fetch, messages.Logout}},
		{in: "dial login list", want: messages.Script{messages.List}},
		{in: "fetch fetch", want: messages.Script{messages.Fetch, messages.Fetch}},
		{in: "", wantErr: "no scheduled command"},
		{in: "login", wantErr: "no scheduled command"},
		{in: "select login fetch", wantErr: `"login" is session set-up: it may only open the script`},
		{in: "select fetchh", wantErr: `unknown phase: "fetchh"`},
		{in: strings.Repeat("noop ", 0) + strings.Repeat("list ", messages.MaxScriptCommands+1), wantErr: "at most 64"},
	} {
		got, err := messages.ParseScript(tc.in)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("ParseScript(%q) error = %v, want one containing %q", tc.in, err, tc.wantErr)
		case tc.wantErr == "" && err != nil:
			t.Errorf("ParseScript(%q) error = %v", tc.in, err)
		case tc.wantErr == "" && !slices.Equal(got, tc.want):
			t.Errorf("ParseScript(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if got := (messages.Script{messages.Select, messages.Logout}).String(); got != "login select logout" {
		t.Errorf("Script.String() = %q, want %q", got, "login select logout")
	}
}

// TestStepCommandSessionRate: a step offered in sessions per second gets its
// command rate from the script's length, and every inconsistent
// combination is refused with what to do.
func TestStepCommandSessionRate(t *testing.T) {
	c, err := messages.ParseStepCommand([]byte(`{"run":"r","step":1,"duration":"10s","script":"login select fetch logout","session_rate":100}`))
	if err != nil {
		t.Fatalf("ParseStepCommand() error = %v", err)
	}
	if c.Rate != 300 || len(c.ScriptOf()) != 3 {
		t.Errorf("rate = %v, script = %v; want 300 (100 sessions/s × 3 commands), 3 commands", c.Rate, c.ScriptOf())
	}
	if c, err := messages.ParseStepCommand([]byte(`{"run":"r","step":1,"duration":"10s","script":"select logout","rate":50}`)); err != nil || c.SessionRate != 0 || c.Rate != 50 {
		t.Errorf("a script offered in commands/s: %+v, %v; want rate 50, no session rate", c, err)
	}
	for _, tc := range []struct{ body, wantErr string }{
		{`"session_rate":10`, "session_rate: needs a script"},
		{`"session_rate":10,"script":"select logout","rate":30`, "rate and session_rate: give one"},
		{`"session_rate":-1,"script":"select logout","rate":30`, "session_rate: -1"},
		{`"rate":10,"script":"select logout","mix":{"fetch":1}`, "script and mix: give one"},
		{`"rate":10,"script":"select nope"`, `script: messages: unknown phase: "nope"`},
	} {
		_, err := messages.ParseStepCommand([]byte(`{"run":"r","step":1,"duration":"10s",` + tc.body + `}`))
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("ParseStepCommand(%s) error = %v, want one containing %q", tc.body, err, tc.wantErr)
		}
	}
	// Consistent rate and session rate (as a normalized command is echoed).
	if _, err := messages.ParseStepCommand([]byte(`{"run":"r","step":1,"duration":"10s","script":"select logout","session_rate":10,"rate":20}`)); err != nil {
		t.Errorf("rate = session_rate × 2 commands: error = %v, want none", err)
	}
}
