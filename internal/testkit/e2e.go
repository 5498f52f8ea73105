package testkit

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Suite is an end-to-end suite: tests that need something from outside Go.
// Without it they skip, or fail when IMAPLOAD_E2E=1 (as .ci/run sets);
// cmd e2estatus runs the tests and says which suites ran, were skipped or
// failed, as `go test ./...` shows no skip of a passing package.
type Suite struct {
	// Name names the suite; Needs what it needs; Enable how to provide it.
	Name, Needs, Enable string
	// Find returns what the suite needs (a path, an address) and whether it
	// is there.
	Find func() (string, bool)
}

// The end-to-end suites.
var (
	Dovecot = Suite{Name: "Dovecot (producer)", Needs: "IMAPLOAD_DOVECOT_ADDR",
		Enable: "start Dovecot with deploy/dovecot/start.sh and export what it prints",
		Find:   func() (string, bool) { v := os.Getenv("IMAPLOAD_DOVECOT_ADDR"); return v, v != "" }}
	// DovecotLMTP is Dovecot's LMTP listener (dovecot-lmtpd), which start.sh
	// serves when the package is installed: the deliveries' end-to-end tests.
	DovecotLMTP = Suite{Name: "Dovecot LMTP (deliveries)", Needs: "IMAPLOAD_DOVECOT_LMTP_ADDR",
		Enable: "apt-get install dovecot-lmtpd, start Dovecot with deploy/dovecot/start.sh and export what it prints",
		Find:   func() (string, bool) { v := os.Getenv("IMAPLOAD_DOVECOT_LMTP_ADDR"); return v, v != "" }}
	NATSCLI = Suite{Name: "nats CLI interop (cmd/imapload)", Needs: "the nats CLI on PATH or in $(go env GOPATH)/bin",
		Enable: "go install github.com/nats-io/natscli/nats@v0.5.0", Find: findNATSCLI}
	Chromium = Suite{Name: "report.html in a browser (reporter)", Needs: "chromium or chromium-headless-shell on PATH",
		Enable: "apt-get install chromium", Find: findChromium}
	// Long is the tests that run real processes through faults or steps of
	// ten seconds and more (an outage of 40 s, a killed aggregator, the demo,
	// a compose cluster): `go test ./...` stays quick without them.
	Long = Suite{Name: "long real-process suites (faults, demo, multi-process, clusters)", Needs: "IMAPLOAD_LONG=1",
		Enable: "export IMAPLOAD_LONG=1 (the README's test command does; IMAPLOAD_E2E=1 implies it)",
		Find:   func() (string, bool) { return "", os.Getenv("IMAPLOAD_LONG") == "1" || E2E() }}
	Docker = Suite{Name: "compose cluster (internal/clustertest)", Needs: "a Docker engine answering `docker version`, and docker-compose",
		Enable: "apt-get install docker.io docker-compose and start dockerd (.ci/run does)", Find: findDocker}
	// NodeExporter is the observer's end-to-end test, which starts its own
	// node_exporter (Debian's binary) on 127.0.0.1.
	NodeExporter = Suite{Name: "node_exporter (observe)", Needs: "prometheus-node-exporter on PATH",
		Enable: "apt-get install prometheus-node-exporter (.ci/run does)",
		Find:   func() (string, bool) { p, err := exec.LookPath("prometheus-node-exporter"); return p, err == nil }}
	Suites = []Suite{Dovecot, DovecotLMTP, NATSCLI, Chromium, Long, Docker, NodeExporter}
)

// PresentMark follows a suite's name in the line Require logs for a test
// that runs with the suite there.
const PresentMark = ": present"

// E2E reports whether IMAPLOAD_E2E=1 demands every suite.
func E2E() bool { return os.Getenv("IMAPLOAD_E2E") == "1" }

// Require returns what s needs, or skips t (fails it under IMAPLOAD_E2E=1)
// saying how to enable the suite. When s is there it logs PresentMark after
// the suite's name, which e2estatus counts (go test shows it with -v only).
func Require(t testing.TB, s Suite) string {
	t.Helper()
	if v, ok := s.Find(); ok {
		t.Log(s.Name + PresentMark)
		return v
	}
	msg := s.Name + ": " + s.Needs + " is missing; " + s.Enable
	if E2E() {
		t.Fatal(msg + " (IMAPLOAD_E2E=1 requires it)")
	}
	t.Skip(msg + " (IMAPLOAD_E2E=1 makes this a failure)")
	return ""
}

func findNATSCLI() (string, bool) {
	if p, err := exec.LookPath("nats"); err == nil {
		return p, true
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		for _, dir := range filepath.SplitList(strings.TrimSpace(string(out))) {
			p := filepath.Join(dir, "bin", "nats")
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p, true
			}
		}
	}
	return "", false
}

func findDocker() (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if exec.CommandContext(ctx, "docker", "version", "--format", "{{.Server.Version}}").Run() != nil {
		return "", false
	}
	p, err := exec.LookPath("docker-compose")
	return p, err == nil
}

func findChromium() (string, bool) {
	for _, name := range []string{"chromium", "chromium-headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, true
		}
	}
	return "", false
}
