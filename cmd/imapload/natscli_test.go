package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
)

// natsTool finds the nats CLI (testkit.NATSCLI): without it the test is
// skipped, or fails under IMAPLOAD_E2E=1.
func natsTool(t *testing.T) string {
	t.Helper()
	return testkit.Require(t, testkit.NATSCLI)
}

// natsToolCmd is one run of the nats CLI against url, with an empty home so
// that no saved context of the user's applies.
func natsToolCmd(ctx context.Context, t *testing.T, tool, url string, args ...string) *exec.Cmd {
	home := t.TempDir()
	c := exec.CommandContext(ctx, tool, append([]string{"--server", url}, args...)...)
	c.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "NATS_CONTEXT=")
	return c
}

// runNATSTool runs the nats CLI to completion and returns its stdout.
func runNATSTool(t *testing.T, tool, url string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var stderr testkit.Buffer
	c := natsToolCmd(ctx, t, tool, url, args...)
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		t.Fatalf("nats %s: %v\nstderr:\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// jsonLines decodes every line of out that is a JSON object into a T.
func jsonLines[T any](out string) []T {
	var vs []T
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		var v T
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &v) == nil {
			vs = append(vs, v)
		}
	}
	return vs
}

// TestNATSCLIInterop checks the contract as an operator uses it with the real
// nats CLI: docs/deploy.md's `nats pub` step command parses; `nats req` lists a
// producer's accept and reject answers; `nats sub 'imapload.results.>'`
// receives the aggregator's step result.
func TestNATSCLIInterop(t *testing.T) {
	t.Parallel()
	tool := natsTool(t)
	ns := startNATS(t, nil)
	url := ns.ClientURL()
	checkCLIPub(t, tool, url)

	imapSrv := startCLI(t, "imapserver", "imapserver", "--listen", "127.0.0.1:0", "--users", "10")
	addr := imapSrv.waitMatch(t, imapAddrRe, 15*time.Second)
	startCLI(t, "producer", "producer", "--nats", url, "--imap", addr, "--id", "cli-p1", "--accounts-count", "10", "--sessions", "4")
	startCLI(t, "aggregator", "aggregator", "--nats", url, "--step-timeout", "5s")
	awaitProducers(t, connect(t, url), "cli-p1")

	sub := startCLISub(t, tool, url, ns)
	checkCLIReq(t, tool, url)
	select {
	case <-sub.done:
		if sub.err != nil {
			t.Fatalf("nats sub --count 1: %v", sub.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("nats sub 'imapload.results.>' --count 1 received nothing in 30s")
	}
	results := jsonLines[messages.StepResult](sub.out.String())
	if len(results) != 1 || results[0].Kind != messages.KindStepResult || results[0].Run != "cli" || !slices.Equal(results[0].Producers, []string{"cli-p1"}) {
		t.Errorf("nats sub printed:\n%s\nwant the step result of run cli from cli-p1", sub.out.String())
	}
	if want := messages.SummaryHeader + ": step 1"; !strings.Contains(sub.out.String(), want) {
		t.Errorf("nats sub printed:\n%s\nwant the one-line summary header %q", sub.out.String(), want)
	}
}

// checkCLIPub: docs/deploy.md's example, sent with nats pub, parses as a step.
func checkCLIPub(t *testing.T, tool, url string) {
	t.Helper()
	nc := connect(t, url)
	sub, err := nc.SubscribeSync(messages.StepSubject)
	if err != nil || nc.Flush() != nil {
		t.Fatalf("SubscribeSync: %v", err)
	}
	defer sub.Unsubscribe()
	runNATSTool(t, tool, url, "pub", messages.StepSubject, `{"run":"r2","step":1,"rate":100,"duration":"5s"}`)
	m, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatalf("nats pub: nothing received: %v", err)
	}
	c, err := messages.ParseStepCommand(m.Data)
	want := messages.StepCommand{Run: "r2", Step: 1, Rate: 100, Duration: messages.Duration(5 * time.Second)}
	if err != nil || !sameStep(c, want) {
		t.Errorf("ParseStepCommand(%s) = %+v, %v; want %+v", m.Data, c, err, want)
	}
}

// checkCLIReq: nats req lists the producer's accept, then its reject of an
// invalid command (which leaves the running step alone).
func checkCLIReq(t *testing.T, tool, url string) {
	t.Helper()
	req := func(body string) []messages.StepReply {
		out := runNATSTool(t, tool, url, "req", messages.StepSubject, body, "--replies", "0", "--timeout", "2s")
		replies := jsonLines[messages.StepReply](out)
		if len(replies) != 1 {
			t.Fatalf("nats req %s printed:\n%s\nwant one producer's answer", body, out)
		}
		return replies
	}
	ok := req(`{"run":"cli","step":1,"rate":20,"duration":"1s"}`)[0]
	if !ok.Accepted || ok.Producer != "cli-p1" || ok.Run != "cli" || ok.Step != 1 || ok.Rate != 20 || ok.Producers != 1 {
		t.Errorf("accept = %+v, want cli-p1 accepting run cli step 1 at 20/s as the only producer", ok)
	}
	bad := req(`{"run":"cli","step":2,"rate":-1,"duration":"1s"}`)[0]
	if bad.Accepted || bad.Producer != "cli-p1" || !strings.Contains(bad.Error, "rate") || bad.Step != 2 {
		t.Errorf("reject = %+v, want cli-p1 refusing step 2 for its rate", bad)
	}
}

// cliSub is a running `nats sub`.
type cliSub struct {
	out  testkit.Buffer
	done chan struct{} // closed once it has exited
	err  error         // its exit, set before done closes
}

// startCLISub starts `nats sub 'imapload.results.>' --count 1` and returns
// once the server holds its subscription. The test's cleanup ends it.
func startCLISub(t *testing.T, tool, url string, ns *embedded.NATS) *cliSub {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	s := &cliSub{done: make(chan struct{})}
	var errOut testkit.Buffer
	c := natsToolCmd(ctx, t, tool, url, "sub", messages.ResultsSubjects, "--count", "1")
	c.Stdout, c.Stderr = &s.out, &errOut
	if err := c.Start(); err != nil {
		cancel()
		t.Fatalf("nats sub: %v", err)
	}
	go func() {
		defer close(s.done)
		s.err = c.Wait()
	}()
	t.Cleanup(func() {
		cancel()
		<-s.done
		if t.Failed() {
			t.Logf("nats sub stderr:\n%s", errOut.String())
		}
	})
	testkit.WaitFor(t, 15*time.Second, "nats sub to subscribe", func() bool { return hasSub(ns.Server(), messages.ResultsSubjects) })
	return s
}

// hasSub reports whether a client of s is subscribed to subject.
func hasSub(s *server.Server, subject string) bool {
	cz, err := s.Connz(&server.ConnzOptions{Subscriptions: true})
	if err != nil {
		return false
	}
	for _, c := range cz.Conns {
		if slices.Contains(c.Subs, subject) {
			return true
		}
	}
	return false
}
