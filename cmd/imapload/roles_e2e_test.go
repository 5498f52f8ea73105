package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/nats-io/nats.go"
)

// TestRolesWholeStep runs a whole step with every process logged in as its
// own role: `imapload nats --config` from the generated configuration,
// `imapload imapserver`, two producers each with its own seed, the
// aggregator, the reporter, and `imapload step --result` as the operator.
// The step completes with both producers, the reporter publishes its run
// report, every process exits 0 on SIGTERM, and the server logged no
// permission violation: what each role does is within its permissions.
func TestRolesWholeStep(t *testing.T) {
	t.Parallel()
	const run = "roles1"
	ids := []string{"producer-1", "producer-2"}
	dir := writeRoles(t, strings.Join(ids, ","))
	natsP := startProc(t, "nats", nil, "nats", "--config", filepath.Join(dir, "nats.conf"),
		"--listen", "127.0.0.1:0", "--log-level", "debug")
	url := natsP.waitMatch(t, natsURLRe, 15*time.Second)
	imapP := startProc(t, "imapserver", nil, "imapserver", "--listen", "127.0.0.1:0", "--users", "100")
	addr := imapP.waitMatch(t, imapAddrRe, 15*time.Second)
	env := []string{"IMAPLOAD_NATS=" + url, "IMAPLOAD_IMAP=" + addr}
	seed := func(role string) string { return filepath.Join(dir, role+".nk") }

	op, err := nats.NkeyOptionFromSeed(seed("operator"))
	if err != nil {
		t.Fatal(err)
	}
	nc := connect(t, url, op)
	results := watchResults(t, nc, run)
	agg := startProc(t, "aggregator", env, "aggregator", "--nats-nkey", seed("aggregator"))
	waitStderr(t, agg, "aggregator: ready", 30*time.Second)
	roles := []*proc{agg, startProc(t, "reporter", env, "reporter", "--run", run, "--out", t.TempDir(), "--nats-nkey", seed("reporter"))}
	for _, id := range ids {
		args := append([]string{"producer", "--id", id, "--sessions", "4", "--nats-nkey", seed(id)}, lagTolerant...)
		roles = append(roles, startProc(t, id, env, args...))
	}
	awaitProducers(t, nc, ids...)

	step := startProc(t, "step", env, "step", "--run", run, "--step", "1", "--rate", "50", "--duration", "2s",
		"--warmup", "500ms", "--stagger", "200ms", "--result", "--result-wait", "30s", "--nats-nkey", seed("operator"))
	r := results.step(t, 1, 90*time.Second)
	if !r.Complete || !slices.Equal(r.Producers, ids) {
		t.Errorf("step 1 result: complete %v, producers %v; want complete from %v", r.Complete, r.Producers, ids)
	}
	if rep := results.report(t, 1, 30*time.Second); rep.Run != run {
		t.Errorf("run report of run %q, want %q", rep.Run, run)
	}
	testkit.WaitFor(t, 60*time.Second, "imapload step --result to exit", step.exited)
	if code := step.code(); code != 0 && code != 4 { // 4: inconclusive, a loaded machine; never refused
		t.Errorf("imapload step --result exited %d, want 0 (or 4 on a loaded machine)\nstdout:\n%s\nstderr:\n%s", code, step.stdout.String(), step.stderr.String())
	}
	stopAll(t, roles, 15*time.Second)
	stopAll(t, []*proc{imapP, natsP}, 15*time.Second)
	if log := natsP.stderr.String(); strings.Contains(log, "Violation") || strings.Contains(log, "violation") {
		t.Errorf("the server logged permission violations:\n%s", violations(log))
	}
	if !strings.Contains(natsP.stderr.String(), "Server is ready") {
		t.Errorf("the server's log did not reach its stderr; the check for violations saw nothing")
	}
}

// violations returns the log lines about permission violations.
func violations(log string) string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(strings.ToLower(line), "violation") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// TestRolesNATSConfigBadFlags: --config does not combine with --user.
func TestRolesNATSConfigBadFlags(t *testing.T) {
	dir := writeRoles(t, "1")
	for _, args := range [][]string{
		{"nats", "--config", filepath.Join(dir, "nats.conf"), "--user", "u", "--password", "p"},
		{"nats", "--config", filepath.Join(dir, "nats.conf"), "--sync", "sometimes"},
	} {
		p := startProc(t, "nats", nil, args...)
		testkit.WaitFor(t, 30*time.Second, "imapload nats to refuse its flags", p.exited)
		if p.code() != 2 {
			t.Errorf("imapload %s exited %d, want 2 (usage)", strings.Join(args, " "), p.code())
		}
	}
}
