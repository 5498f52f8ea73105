package producer_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/imapload/imapload/aggregator"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
)

// TestProfiles runs a short step of each named profile against the
// embedded server: every command the profile weighs at 5% or more
// succeeds, the server is charged with no error, and the pooled step is
// not made inconclusive by commands with nothing to address.
func TestProfiles(t *testing.T) {
	t.Parallel() // waits on steps of its own servers
	f := newFleet(t, nil)
	f.start(f.options("prof", 8))
	f.waitLive(1)
	for i, p := range messages.Profiles() {
		runProfile(t, f, "prof", i+1, p)
	}
}

// TestDovecotProfiles runs each named profile against a real Dovecot.
func TestDovecotProfiles(t *testing.T) {
	dc := dovecotFromEnv(t)
	f := newDovecotFleet(t)
	logs := &testkit.Buffer{}
	f.start(dc.options(t, "dcprof", dc.Password, logs))
	f.waitLive(1)
	for i, p := range messages.Profiles() {
		runProfile(t, f, "dcprof", i+1, p)
	}
	checkNoPassword(t, nil, logs, dc.Password)
}

// runProfile runs step i of profile p on the fleet's producer id and
// checks it (see TestProfiles).
func runProfile(t *testing.T, f *fleet, id string, i int, p messages.Profile) {
	t.Helper()
	rate := `"rate":150`
	if p.Script != "" {
		rate = `"session_rate":30`
	}
	body := fmt.Sprintf(`%s,"profile":%q,"warmup":"500ms","duration":"2s","stagger":"200ms"`, rate, p.Name)
	bs := f.runStep(id, id, i, body)
	cmd, err := messages.ParseStepCommand(fmt.Appendf(nil, `{"run":%q,"step":%d,%s}`, id, i, body))
	if err != nil {
		t.Fatal(err)
	}
	pool := aggregator.NewCommandPool(cmd, nil)
	for _, b := range bs {
		if _, err := pool.Add(b); err != nil {
			t.Fatalf("%s: Pool.Add() error = %v", p.Name, err)
		}
	}
	r := pool.Result()
	for _, rs := range r.Reasons {
		if rs.Code == messages.ReasonUnaddressable || rs.Code == messages.ReasonFailing {
			t.Errorf("%s: %s: %s", p.Name, rs.Code, rs.Detail)
		}
	}
	for _, e := range r.Errors {
		if !strings.HasPrefix(e.Kind, messages.GeneratorKind) {
			t.Errorf("%s: the server's error %s %q ×%d", p.Name, e.Phase, e.Kind, e.Count)
		}
	}
	for _, ph := range weighty(t, cmd) {
		if r.Phases[ph].Succeeded == 0 {
			t.Errorf("%s: no %s succeeded (phases %v)", p.Name, ph, r.Phases)
		}
	}
	if r.Profile != p.Name {
		t.Errorf("result profile %q, want %q", r.Profile, p.Name)
	}
}

// weighty lists the commands of cmd's mix weighing 5% or more, or its script's.
func weighty(t *testing.T, cmd messages.StepCommand) []string {
	t.Helper()
	var out []string
	for _, ph := range cmd.ScriptOf() {
		out = append(out, ph.String())
	}
	sum := 0.0
	for _, w := range cmd.Mix {
		sum += w
	}
	for name, w := range cmd.Mix {
		if w >= 0.05*sum {
			out = append(out, name)
		}
	}
	return out
}
