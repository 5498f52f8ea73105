package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
)

// TestRunDovecot is issue 21's acceptance against a real server: the
// private Dovecot of deploy/dovecot/start.sh, seeded with `imapload seed`,
// then `imapload run` on its plain port and, with --tls and its CA, on its
// IMAPS port. Each ends with a verdict, the table and report.html, and
// exits with the code of that verdict. Short, low steps: the host's speed
// is not judged.
func TestRunDovecot(t *testing.T) {
	d := testkit.DovecotFromEnv(t, 10)
	testkit.Require(t, testkit.Long)
	t.Parallel()
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte(d.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	accounts := []string{"--accounts-template", d.Prefix + "%d", "--accounts-count", "10", "--accounts-password-file", pw}
	seeded := runOnce(t, nil, 2*time.Minute, append([]string{"seed", "--imap", d.Addr, "--messages", "20"}, accounts...)...)
	if seeded.code != 0 {
		t.Fatalf("imapload seed: %s", seeded)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"plain", []string{"--imap", d.Addr}},
		{"tls", []string{"--imap", d.TLSAddr, "--tls", "--tls-ca", filepath.Join(d.Dir, "cert.pem")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "report")
			args := slices.Concat([]string{"run", "--producers", "1", "--rates", "20,40", "--step-duration", "2s", "--out", dir},
				tc.args, accounts, []string{"--sessions", "4", "--saturation-lag", "1h"})
			o := runOnce(t, []string{"TMPDIR=" + t.TempDir()}, 3*time.Minute, args...)
			checkRunEnd(t, o.stdout, codeErr(o.code), dir)
			checkServed(t, readReport(t, filepath.Join(dir, "report.json")), tc.name == "tls")
		})
	}
}

// codeErr is an error with exit code code (nil for 0), for checkRunEnd.
func codeErr(code int) error {
	if code == 0 {
		return nil
	}
	return &exitError{code: code, err: os.ErrInvalid}
}

// checkServed: the server answered commands in every step, over TLS when
// tls (the dial phase has handshake figures in each step that dialled
// within its window).
func checkServed(t *testing.T, r messages.RunReport, tls bool) {
	t.Helper()
	for _, s := range r.Steps {
		if s.Succeeded == 0 {
			t.Errorf("step %d: no command succeeded", s.Step)
		}
		// A step whose sessions all dialled in its warm-up (a loaded host, a
		// short step) has no dial in its window to time: the commands it
		// served over the TLS-only port are the proof of TLS there.
		if dial := s.Phases[messages.Dial.String()]; tls && dial.Count > 0 && (dial.TLS == nil || dial.TLS.P50 <= 0) {
			t.Errorf("step %d over --tls: dial TLS figures %+v, want handshakes", s.Step, dial.TLS)
		}
	}
}

// joinLineRe is the producer command run --listen prints for another host.
var joinLineRe = regexp.MustCompile(`(?m)^  (imapload producer --nats \S+ --nats-nkey .*)$`)

// TestRunListen: `run --listen` on one side and, on the other, a separate
// `imapload producer` process started with exactly the command run printed
// (its NATS URL, its seed file and id, the run's IMAP flags: no secret)
// both offer load in the same steps, and every step's producers list both.
func TestRunListen(t *testing.T) {
	testkit.Require(t, testkit.Long)
	t.Parallel()
	srv, err := embedded.StartIMAP(&embedded.IMAPOptions{Users: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "report")
	run := startProc(t, "run", []string{"TMPDIR=" + t.TempDir()}, "run", "--imap", srv.Addr(), "--producers", "1", "--listen", "127.0.0.1:0",
		"--expect-producers", "1", "--rates", "20,40", "--step-duration", "2s", "--accounts-count", "10", "--sessions", "4",
		"--saturation-lag", "1h", "--out", dir)
	line := run.waitMatch(t, joinLineRe, time.Minute)
	if strings.Contains(line, "secret") || strings.Contains(line, "SU") {
		t.Errorf("printed producer command holds a secret: %s", line)
	}
	args := strings.Fields(line)[1:]
	producer := startProc(t, "producer", nil, args...)
	o := awaitOutcome(t, run, 3*time.Minute, " (waiting for the joined producer?)")
	checkRunEnd(t, o.stdout, codeErr(o.code), dir)
	r := readReport(t, filepath.Join(dir, "report.json"))
	for _, s := range r.Steps {
		if len(s.Producers) != 2 || !slices.Contains(s.Producers, "remote-1") {
			t.Errorf("step %d producers = %v, want the local one and remote-1", s.Step, s.Producers)
		}
	}
	producer.signal(t)
}
