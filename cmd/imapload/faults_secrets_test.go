package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// faultSecret is the NATS password of TestFaultPasswordFile: distinctive,
// so that finding it anywhere is a leak.
const faultSecret = "fault-Pw-R7v2Kq9X"

// TestFaultPasswordFile is issue 10's finding 6 with real processes: NATS
// requires a user and password, given to every process only as a file
// (`imapload nats --password-file`, `--nats-password-file` for the
// producers, the aggregator, the reporter and `imapload step`), all at
// debug log level. While they run, no /proc/<pid>/cmdline and no
// /proc/<pid>/environ holds the password; after a step and SIGTERM, no
// process's stdout or stderr does.
func TestFaultPasswordFile(t *testing.T) {
	t.Parallel()
	const run, user = "fault-secret", "imapload"
	file := secretFile(t, faultSecret+"\n")
	f := startFaultFleet(t, faultOptions{
		name:       "fsecret",
		natsArgs:   []string{"--user", user, "--password-file", file, "--log-level", "debug"},
		clientArgs: []string{"--nats-user", user, "--nats-password-file", file, "--log-level", "debug"},
		natsOpts:   []nats.Option{nats.UserInfo(user, faultSecret)},
		reportOut:  t.TempDir(),
	})
	f.step(t, run, 1, 40, 3*time.Second)
	r := latest(t, f.js, run, 1, time.Minute, nil)
	f.checkWhole(t, r)
	checkProcNoSecret(t, f.all)

	var clients []*proc
	for _, p := range f.all {
		if !p.exited() && p != f.natsP && p != f.imapP {
			clients = append(clients, p)
		}
	}
	stopAll(t, clients, 20*time.Second) // the clients first, while NATS still answers
	stopAll(t, []*proc{f.imapP, f.natsP}, 20*time.Second)
	checked := 0
	for _, p := range f.all {
		for stream, out := range map[string]string{"stdout": p.stdout.String(), "stderr": p.stderr.String()} {
			checked += len(out)
			if strings.Contains(out, faultSecret) {
				t.Errorf("%s %s shows the NATS password", p.name, stream)
			}
		}
	}
	t.Logf("%d processes, %d bytes of output: no password", len(f.all), checked)
}

// checkProcNoSecret checks the command line and environment of every
// running process for the password.
func checkProcNoSecret(t *testing.T, ps []*proc) {
	t.Helper()
	seen := 0
	for _, p := range ps {
		if p.exited() {
			continue
		}
		for _, file := range []string{"cmdline", "environ"} {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", p.cmd.Process.Pid, file))
			if err != nil {
				t.Errorf("%s: %v", p.name, err)
				continue
			}
			if strings.Contains(string(b), faultSecret) {
				t.Errorf("/proc/%d/%s of %s shows the NATS password: %q", p.cmd.Process.Pid, file, p.name, strings.ReplaceAll(string(b), "\x00", " "))
			}
		}
		seen++
	}
	if seen < 6 { // nats, imapserver, two producers, the aggregator, the reporter
		t.Errorf("%d processes running to check, want 6", seen)
	}
}
