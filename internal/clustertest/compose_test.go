package clustertest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
)

// composeFile is the clustered fleet this test runs.
var composeFile = filepath.Join("..", "..", "deploy", "docker", "compose.cluster.yml")

// composeProject is deploy/docker/compose.cluster.yml brought up under a
// project name of its own, with its own image and free host ports.
type composeProject struct {
	t    *testing.T
	name string
	env  []string
}

// TestComposeClusterNodeKilled builds the image (FROM scratch around the
// static binary, as deploy/docker/Dockerfile does), brings up the clustered
// compose file with two producers, runs a step from the host through the
// published ports, SIGKILLs the samples stream leader's container (docker
// kill) in the middle of it, and checks the step's result as the in-process
// tests do; then it starts the container again and waits for it to rejoin,
// and for the reporter's report. One of the long suites (IMAPLOAD_LONG=1,
// implied by IMAPLOAD_E2E=1), it skips where no Docker engine answers (and
// fails there under IMAPLOAD_E2E=1); it always tears the project down
// (down -v) and removes its image.
func TestComposeClusterNodeKilled(t *testing.T) {
	t.Parallel()
	testkit.Require(t, testkit.Long)
	testkit.Require(t, testkit.Docker)
	start := time.Now()
	p := upCompose(t)
	t.Logf("image built and project %s up in %v", p.name, time.Since(start).Round(time.Second))
	var urls []string
	for _, n := range []string{"nats1", "nats2", "nats3"} {
		urls = append(urls, "nats://"+strings.TrimSpace(p.run(time.Minute, "port", n, "4222")))
	}
	nc, err := nats.Connect(strings.Join(urls, ","), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond),
		nats.IgnoreDiscoveredServers(), nats.RetryOnFailedConnect(true))
	if err != nil {
		t.Fatalf("nats.Connect(%v) error = %v", urls, err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	f := &fleet{t: t, nc: nc, js: js, ids: registered(t, js, 2)}
	var killed string
	f.stepWithNodeDown("compose", func() string {
		info := streamInfo(js, messages.SamplesStream)
		killed = info.Cluster.Leader // the service's name too: nats1…nats3
		p.run(time.Minute, "kill", "-s", "SIGKILL", killed)
		return killed + " (SIGKILL to the samples leader's container)"
	})
	restarted := time.Now()
	p.run(2*time.Minute, "start", killed)
	awaitRejoined(t, js, killed, restarted)
	report := filepath.Join(p.reportDir(), "compose", "report.json")
	testkit.WaitFor(t, waitLong, "the reporter's "+report, func() bool { _, err := os.Stat(report); return err == nil })
	ids := strings.Fields(p.run(time.Minute, "ps", "-q"))
	t.Logf("restarts (a client that started before JetStream's meta leader): %s",
		strings.Join(strings.Fields(p.exec(time.Minute, "docker", append([]string{"inspect", "--format", "{{.Name}}={{.RestartCount}}"}, ids...)...)), " "))
	t.Logf("the whole test took %v", time.Since(start).Round(time.Second))
}

// upCompose builds the static binary and an image of its own, and brings the
// project up with two producers; t's cleanup takes it down with its volumes
// and removes the image.
func upCompose(t *testing.T) *composeProject {
	t.Helper()
	dir := t.TempDir()
	build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(dir, "imapload"), "../../cmd/imapload")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dockerfile, err := os.ReadFile(filepath.Join("..", "..", "deploy", "docker", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), dockerfile, 0o644); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("imaploadct%d", os.Getpid())
	image := "imapload:" + name
	reports := t.TempDir()
	p := &composeProject{t: t, name: name, env: []string{"IMAPLOAD_IMAGE=" + image, "IMAPLOAD_REPORT_DIR=" + reports,
		"IMAPLOAD_NATS1_PORT=127.0.0.1:", "IMAPLOAD_NATS2_PORT=127.0.0.1:", "IMAPLOAD_NATS3_PORT=127.0.0.1:",
		fmt.Sprintf("IMAPLOAD_UID=%d", os.Getuid()), fmt.Sprintf("IMAPLOAD_GID=%d", os.Getgid())}}
	p.exec(5*time.Minute, "docker", "build", "-q", "-t", image, dir)
	t.Cleanup(func() { p.exec(2*time.Minute, "docker", "rmi", "-f", image) })
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- logs:\n%s", tail(p.run(time.Minute, "logs", "--no-color"), 80))
		}
		p.run(3*time.Minute, "down", "-v", "--timeout", "5")
	})
	p.run(5*time.Minute, "up", "-d", "--scale", "producer=2")
	return p
}

// run runs docker-compose with the project's file, name and environment.
func (p *composeProject) run(within time.Duration, args ...string) string {
	p.t.Helper()
	return p.exec(within, "docker-compose", append([]string{"-f", composeFile, "-p", p.name}, args...)...)
}

// exec runs a command for at most within and returns its standard output;
// a failure is reported with its standard error (Errorf: cleanups go on).
func (p *composeProject) exec(within time.Duration, name string, args ...string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), p.env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	begin := time.Now()
	if err := cmd.Run(); err != nil {
		p.t.Errorf("%s %s: %v after %v\n%s", name, strings.Join(args, " "), err, time.Since(begin).Round(time.Second), tail(stderr.String(), 30))
	}
	return stdout.String()
}

// reportDir is where the reporter's files land on the host.
func (p *composeProject) reportDir() string {
	for _, e := range p.env {
		if dir, ok := strings.CutPrefix(e, "IMAPLOAD_REPORT_DIR="); ok {
			return dir
		}
	}
	return ""
}

// registered waits until n producers are in the registry and returns their
// ids, sorted.
func registered(t *testing.T, js jetstream.JetStream, n int) []string {
	t.Helper()
	var ids []string
	testkit.WaitFor(t, waitLong, fmt.Sprintf("%d producers to register", n), func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		kv, err := js.KeyValue(ctx, messages.ProducersBucket)
		if err != nil {
			return false
		}
		ids, err = kv.Keys(ctx)
		return err == nil && len(ids) == n
	})
	slices.Sort(ids)
	return ids
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
