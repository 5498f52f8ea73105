package main

import (
	"github.com/imapload/imapload/internal/testkit"
	"strings"
	"testing"

	"github.com/imapload/imapload/verdict"
)

// TestNATSNotRunning: every command that needs NATS, given a URL nothing
// listens on, says so with the fix (start `imapload nats`, or --nats) and
// exits 1; user info in the URL stays hidden.
func TestNATSNotRunning(t *testing.T) {
	t.Parallel()
	url := "nats://" + testkit.ClosedAddr(t)
	for _, args := range [][]string{
		{"aggregator"}, {"reporter"}, {"ramp"}, {"producer", "--imap", "127.0.0.1:1"},
		{"step", "--run", "r1", "--step", "1", "--rate", "10", "--duration", "1s"}, {"tail", "--run", "r1"}, {"compare", "r1", "r2"},
	} {
		t.Run(args[0], func(t *testing.T) {
			t.Parallel()
			_, _, err := runCLI(t.Context(), append(args, "--nats", url)...)
			if err == nil || exitCode(err) != verdict.ExitError {
				t.Fatalf("imapload %v: %v (exit %d), want exit %d", args, err, exitCode(err), verdict.ExitError)
			}
			for _, want := range []string{"no NATS server at " + url, "start `imapload nats`", "give --nats URL"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("imapload %v: %q, want it to say %q", args, err, want)
				}
			}
		})
	}
	_, _, err := runCLI(t.Context(), "aggregator", "--nats", strings.Replace(url, "//", "//op:Pw-9x7@", 1))
	if err == nil || strings.Contains(err.Error(), "Pw-9x7") || !strings.Contains(err.Error(), "start `imapload nats`") {
		t.Errorf("imapload aggregator with user info: %v, want the fix without the password", err)
	}
}
