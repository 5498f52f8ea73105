package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/verdict"
)

// TestChecksBeforeAnything: impossible flag values, a missing address and
// a report folder that cannot be written are usage errors found before any
// connection (the NATS URL is unreachable: an error about it would mean
// the check came too late).
func TestChecksBeforeAnything(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"producer without --imap", []string{"producer"}, "--imap is required"},
		{"producer --imap without port", []string{"producer", "--imap", "mail.example.net"}, `--imap "mail.example.net": want host:port`},
		{"no sessions", []string{"producer", "--imap", "127.0.0.1:1143", "--sessions", "0"}, "--sessions 0: want ≥ 1"},
		{"negative duration", []string{"aggregator", "--step-timeout", "-1s"}, "--step-timeout -1s: want a duration ≥ 0"},
		{"threshold above 1", []string{"reporter", "--threshold", "2"}, "--threshold 2: want > 0 and ≤ 1"},
		{"threshold 0", []string{"tail", "--run", "r", "--threshold", "0"}, "--threshold 0: want > 0 and ≤ 1"},
		{"bcrypt cost bcrypt would replace", []string{"imapserver", "--bcrypt-cost", "2"}, "--bcrypt-cost 2: want ≥ 0 and ≤ 31, not 1–3"},
		{"fraction above 1", []string{"imapserver", "--drop-fraction", "1.5"}, "--drop-fraction 1.5: want ≥ 0 and ≤ 1"},
		{"demo without producers", []string{"demo", "--producers", "0"}, "--producers 0: want ≥ 1"},
		{"replicas", []string{"aggregator", "--replicas", "7"}, "--replicas 7: want ≥ 1 and ≤ 5"},
		{"--out not writable", []string{"ramp", "--run", "r", "--out", filepath.Join(file, "report")}, "--out " + filepath.Join(file, "report") + ": cannot create the report folder"},
		{"every problem at once", []string{"producer", "--sessions", "0", "--queue", "-1"}, "--queue -1: want ≥ 0\n--sessions 0: want ≥ 1\n--imap is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			args := append(tt.args, "--nats", unreachableNATS)
			if tt.args[0] == "imapserver" || tt.args[0] == "demo" {
				args = tt.args // no NATS flags: nothing may start either
			}
			_, _, err := runCLI(ctx, args...)
			if code := exitCode(err); code != verdict.ExitUsage || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("imapload %s = exit %d, %v; want exit %d, an error containing %q", strings.Join(args, " "), code, err, verdict.ExitUsage, tt.want)
			}
		})
	}
}

func TestCheckOutWritable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "report")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err := runCLI(ctx, "reporter", "--out", dir, "--nats", unreachableNATS)
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("imapload reporter --out %s = %v; want it past the checks, failing on the connection", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 0 {
		t.Errorf("--out %s after the check: %v, %d entries; want an empty folder (the probe removed)", dir, err, len(entries))
	}
}
