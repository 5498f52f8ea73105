package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// TestFaultSecretsInURLs (finding 6) with real processes: a NATS URL whose
// user info does not parse — no scheme, a '%zz', a '#' — never shows the
// password in what the process prints, and the process exits 1.
func TestFaultSecretsInURLs(t *testing.T) {
	for _, url := range []string{"alice:Secret1@127.0.0.1:1", "nats://alice:Se%zzcret1@127.0.0.1:1", "nats://alice:Sec#ret1@127.0.0.1:1"} {
		o := runOnce(t, nil, time.Minute, "aggregator", "--nats", url)
		if o.code != verdict.ExitError {
			t.Errorf("imapload aggregator --nats %s: %s\nwant exit 1", url, o)
		}
		for _, secret := range []string{"Secret1", "Se%zzcret1", "zzcret1", "Sec#ret1"} {
			if strings.Contains(o.stdout+o.stderr, secret) {
				t.Errorf("imapload aggregator --nats <URL with %q> printed it:\n%s", secret, o)
			}
		}
	}
}

// TestFaultTLSInsecure (finding 8) with real processes: --tls-insecure
// without --tls is refused before anything runs (exit 2); with --tls it is
// warned about as the producer starts.
func TestFaultTLSInsecure(t *testing.T) {
	o := runOnce(t, nil, time.Minute, "producer", "--imap", "127.0.0.1:1", "--tls-insecure", "--nats", unreachableNATS)
	if o.code != verdict.ExitUsage || !strings.Contains(o.stderr, "--tls-insecure needs --tls") {
		t.Errorf("imapload producer --tls-insecure (no --tls): %s\nwant exit 2 naming --tls", o)
	}
	o = runOnce(t, nil, time.Minute, "producer", "--imap", "127.0.0.1:1", "--tls", "--tls-insecure", "--nats", unreachableNATS)
	if !strings.Contains(o.stderr, "certificate is NOT verified") {
		t.Errorf("imapload producer --tls --tls-insecure: %s\nwant the warning at start", o)
	}
}

// TestFaultReportUmask (finding 8) with real processes: a reporter started
// under umask 077 writes its report private (0700 folders, 0600 files).
func TestFaultReportUmask(t *testing.T) {
	natsP := startProc(t, "umask-nats", nil, "nats", "--listen", "127.0.0.1:0", "--store", t.TempDir())
	url := natsP.waitMatch(t, natsURLRe, 15*time.Second)
	js, err := jetstream.New(connect(t, url))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "reports")
	rep := exec.Command("sh", "-c", `umask 077 && exec "$0" "$@"`, binary(t), "reporter", "--nats", url, "--out", out)
	rep.Env = os.Environ()
	var stderr testkit.Buffer
	rep.Stderr = &stderr
	if err := rep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rep.Process.Kill(); _ = rep.Wait() })
	testkit.WaitFor(t, 15*time.Second, "the reporter to start", func() bool { return strings.Contains(stderr.String(), "reporter: ready") })
	data, _ := json.Marshal(tailStep(1, 100, 1, 0))
	if _, err := js.Publish(t.Context(), messages.ResultsSubject("t1"), data); err != nil {
		t.Fatal(err)
	}
	report, page := filepath.Join(out, "t1", "report.json"), filepath.Join(out, "t1", "report.html")
	for _, f := range []string{report, page} { // each written whole (renamed into place), one after the other
		testkit.WaitFor(t, 30*time.Second, f, func() bool { _, err := os.Stat(f); return err == nil })
	}
	for path, want := range map[string]os.FileMode{out: 0o700, filepath.Dir(report): 0o700, report: 0o600, page: 0o600} {
		st, err := os.Stat(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
		} else if st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v under umask 077", path, st.Mode().Perm(), want)
		}
	}
}
