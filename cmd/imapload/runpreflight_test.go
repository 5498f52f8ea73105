package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/verdict"
)

// TestRunPreflight: `imapload run` checks the target before any load and a
// mistake ends it with its fix and exit 2, before NATS or a producer is
// started (no store is made, no step is offered).
func TestRunPreflight(t *testing.T) {
	srv, err := embedded.StartIMAP(&embedded.IMAPOptions{Password: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tests := []struct {
		name string
		args []string
		fix  string
	}{
		{"plain port under --tls", []string{"--tls", "--tls-insecure"}, "drop --tls"},
		{"wrong password", []string{"--accounts-password", "wrong"}, "password"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			args := append([]string{"run", "--imap", srv.Addr(), "--producers", "1", "--out", filepath.Join(t.TempDir(), "r")}, runShortArgs...)
			out, errOut, err := runCLI(ctx, append(args, tt.args...)...)
			if code := exitCode(err); code != verdict.ExitUsage {
				t.Fatalf("run %v: exit %d (%v), want %d\nstdout:\n%s\nstderr:\n%s", tt.args, code, err, verdict.ExitUsage, out, tail(errOut, 10))
			}
			if !strings.Contains(err.Error(), tt.fix) {
				t.Errorf("run %v: error %q does not name the fix (%q)", tt.args, err, tt.fix)
			}
			if strings.Contains(out, "step 1: ") {
				t.Errorf("run %v offered a step after a failed check:\n%s", tt.args, out)
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "imapload-*")); len(left) > 0 {
				t.Errorf("run %v made %v before the check failed", tt.args, left)
			}
		})
	}
}
