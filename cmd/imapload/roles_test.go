package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// writeRoles runs `imapload roles` in this process for the producer ids and
// returns its --out directory.
func writeRoles(t *testing.T, producers string, extra ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "roles")
	args := append([]string{"roles", "--out", out, "--producers", producers, "--store", filepath.Join(t.TempDir(), "js")}, extra...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, stderr, err := runCLI(ctx, args...); err != nil {
		t.Fatalf("imapload %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return out
}

// roleConn is a client logged in with one role's seed; denied receives the
// permission violations the server reports to it.
type roleConn struct {
	role   string
	nc     *nats.Conn
	js     jetstream.JetStream
	denied chan error
}

func connectRole(t *testing.T, ns *embedded.NATS, dir, role string) *roleConn {
	t.Helper()
	seed, err := nats.NkeyOptionFromSeed(filepath.Join(dir, role+".nk"))
	if err != nil {
		t.Fatalf("seed of %s: %v", role, err)
	}
	rc := &roleConn{role: role, denied: make(chan error, 16)}
	rc.nc = connect(t, ns.ClientURL(), seed, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if errors.Is(err, nats.ErrPermissionViolation) {
			rc.denied <- err
		}
	}))
	rc.js, err = jetstream.New(rc.nc)
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// refused publishes data on subject and checks that the server refuses it:
// it reports the violation, naming the subject, to the publisher.
func (rc *roleConn) refused(t *testing.T, subject string) {
	t.Helper()
	if err := rc.nc.Publish(subject, []byte(`{"forged":true}`)); err != nil {
		t.Fatalf("%s: Publish(%s): %v", rc.role, subject, err)
	}
	rc.awaitDenied(t, subject)
}

// startRolesServer starts an in-process server from the generated config.
func startRolesServer(t *testing.T, dir string) *embedded.NATS {
	t.Helper()
	ns, _ := startRolesServerLog(t, dir)
	return ns
}

// startRolesServerLog is startRolesServer that also returns the server's log.
func startRolesServerLog(t *testing.T, dir string) (*embedded.NATS, *testkit.Buffer) {
	t.Helper()
	log := &testkit.Buffer{}
	ns, err := embedded.StartNATS(&embedded.NATSOptions{ConfigFile: filepath.Join(dir, "nats.conf"), Host: "127.0.0.1", Port: -1,
		Logf: func(format string, args ...any) { fmt.Fprintf(log, format+"\n", args...) }})
	if err != nil {
		t.Fatalf("StartNATS(generated config): %v", err)
	}
	t.Cleanup(ns.Shutdown)
	return ns, log
}

// TestRolesRefuseOutsidePermissions starts nats-server from the config
// `imapload roles` writes and logs in as each role: what the role does is
// allowed, and every forgery is refused by the server and never stored.
func TestRolesRefuseOutsidePermissions(t *testing.T) {
	dir := writeRoles(t, "p1,p2")
	ns := startRolesServer(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	agg, rep, op, p1 := connectRole(t, ns, dir, "aggregator"), connectRole(t, ns, dir, "reporter"),
		connectRole(t, ns, dir, "operator"), connectRole(t, ns, dir, "p1")
	ensureAll(t, ctx, agg, p1)
	allowed(t, ctx, agg, p1, op)

	forged := []struct {
		rc      *roleConn
		subject string
	}{
		{p1, messages.ResultsSubject("r1")},
		{p1, messages.StepSubject},
		{p1, messages.SamplesSubject("r1", 1, "p2")},
		{p1, "$KV." + messages.ProducersBucket + ".p2"},
		{p1, "$JS.API.STREAM.UPDATE." + messages.SamplesStream},
		{p1, "$JS.API.STREAM.PURGE." + messages.SamplesStream},
		{p1, "$JS.API.CONSUMER.CREATE." + messages.SamplesStream + ".imapload-aggregator"}, // the aggregator's durable
		{p1, "_INBOX.forged-reply"},
		{agg, messages.SamplesSubject("r1", 1, "p1")},
		{agg, messages.StepSubject},
		{rep, messages.SamplesSubject("r1", 1, "p1")},
		{rep, messages.StepSubject},
		{op, messages.SamplesSubject("r1", 1, "p1")},
		{op, messages.ResultsSubject("r1")},
		{op, "$JS.API.STREAM.DELETE." + messages.ResultsStream},
	}
	for _, f := range forged {
		f.rc.refused(t, f.subject)
	}
	checkStored(t, ctx, agg.js, map[string]uint64{
		messages.SamplesStream + " " + messages.SamplesSubject("r1", 1, "p1"): 1, // p1's own, below
		messages.SamplesStream + " " + messages.SamplesSubject("r1", 1, "p2"): 0,
		messages.ResultsStream + " " + messages.ResultsSubject("r1"):          1, // the aggregator's own
		bus.StepsStream + " " + messages.StepSubject:                          1, // the operator's own
	})
	if _, err := bus.RunResults(ctx, p1.js, "r1"); err != nil { // a producer looks before it runs a step
		t.Errorf("bus.RunResults(as p1) error = %v, want the producer allowed to read the results' ids", err)
	}
	checkStored(t, ctx, op.js, map[string]uint64{ // the aggregator may not look at the registry
		"KV_" + messages.ProducersBucket + " $KV." + messages.ProducersBucket + ".p1": 1,
		"KV_" + messages.ProducersBucket + " $KV." + messages.ProducersBucket + ".p2": 0,
	})
}

// ensureAll creates the streams and the bucket as the roles that own them do.
func ensureAll(t *testing.T, ctx context.Context, agg, p1 *roleConn) {
	t.Helper()
	for name, ensure := range map[string]func() error{
		"EnsureSamples(aggregator)":  func() error { _, err := bus.EnsureSamples(ctx, agg.js, nil); return err },
		"EnsureResults(aggregator)":  func() error { _, err := bus.EnsureResults(ctx, agg.js, nil); return err },
		"EnsureSteps(aggregator)":    func() error { _, err := bus.EnsureSteps(ctx, agg.js, nil); return err },
		"EnsureSamples(p1)":          func() error { _, err := bus.EnsureSamples(ctx, p1.js, nil); return err },
		"EnsureSteps(p1)":            func() error { _, err := bus.EnsureSteps(ctx, p1.js, nil); return err },
		"EnsureProducers(p1)":        func() error { _, err := bus.EnsureProducers(ctx, p1.js, nil); return err },
		"EnsureProducers(p1) again":  func() error { _, err := bus.EnsureProducers(ctx, p1.js, nil); return err },
		"EnsureResults(aggregator)2": func() error { _, err := bus.EnsureResults(ctx, agg.js, nil); return err },
	} {
		if err := ensure(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// allowed does what each role is for: a producer publishes its own batch and
// registry key, the aggregator a result, the operator a step command.
func allowed(t *testing.T, ctx context.Context, agg, p1, op *roleConn) {
	t.Helper()
	if _, err := p1.js.Publish(ctx, messages.SamplesSubject("r1", 1, "p1"), []byte("x"),
		jetstream.WithMsgID(messages.BatchMsgID("r1", 1, "p1", 0))); err != nil {
		t.Errorf("p1: publish its own batch: %v", err)
	}
	kv, err := p1.js.KeyValue(ctx, messages.ProducersBucket)
	if err == nil {
		_, err = kv.Put(ctx, messages.ProducerKey("p1"), []byte(`{"id":"p1"}`))
	}
	if err != nil {
		t.Errorf("p1: put its own registry key: %v", err)
	}
	if _, err := agg.js.Publish(ctx, messages.ResultsSubject("r1"), []byte(`{"kind":"step_result"}`)); err != nil {
		t.Errorf("aggregator: publish a result: %v", err)
	}
	if err := op.nc.Publish(messages.StepSubject, []byte(`{"run":"r1","step":1,"rate":1,"duration":"1s"}`)); err != nil {
		t.Errorf("operator: publish a step command: %v", err)
	}
	if err := op.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, rc := range []*roleConn{agg, p1, op} {
		select {
		case err := <-rc.denied:
			t.Errorf("an allowed operation was refused: %v", err)
		default:
		}
	}
}

// checkStored checks how many messages each "STREAM subject" holds.
func checkStored(t *testing.T, ctx context.Context, js jetstream.JetStream, want map[string]uint64) {
	t.Helper()
	for key, n := range want {
		stream, subject, _ := strings.Cut(key, " ")
		var got uint64
		testkit.WaitFor(t, 10*time.Second, stream+" to settle", func() bool {
			st, err := js.Stream(ctx, stream)
			if err != nil {
				t.Fatalf("Stream(%s): %v", stream, err)
			}
			info, err := st.Info(ctx, jetstream.WithSubjectFilter(subject))
			if err != nil {
				t.Fatalf("Info(%s): %v", stream, err)
			}
			got = info.State.Subjects[subject]
			return got >= n
		})
		if got != n {
			t.Errorf("stream %s holds %d messages on %s, want %d", stream, got, subject, n)
		}
	}
}

// TestRolesOutput: the seeds are private and nats.conf names every role,
// with public keys only.
func TestRolesOutput(t *testing.T) {
	dir := writeRoles(t, "3")
	conf, err := os.ReadFile(filepath.Join(dir, "nats.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"reporter", "operator", "producer-1", "producer-2", "producer-3"} {
		fi, err := os.Stat(filepath.Join(dir, role+".nk"))
		if err != nil {
			t.Errorf("seed of %s: %v", role, err)
			continue
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s.nk mode %v, want 0600", role, fi.Mode().Perm())
		}
		seed, _ := os.ReadFile(filepath.Join(dir, role+".nk"))
		if strings.Contains(string(conf), strings.TrimSpace(string(seed))) {
			t.Errorf("nats.conf holds the seed of %s", role)
		}
	}
	if n := strings.Count(string(conf), "nkey: U"); n != 6 {
		t.Errorf("nats.conf has %d NKey users, want 6", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, _, err := runCLI(ctx, "roles", "--out", dir, "--producers", "3"); exitCode(err) != verdict.ExitUsage {
		t.Errorf("imapload roles into a directory that has a nats.conf: %v, want a usage error (--force)", err)
	}
}

// TestRolesExampleIsGenerated: deploy/nats/imapload.conf is exactly what
// the generator writes, keys read from the environment.
func TestRolesExampleIsGenerated(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	want, _, err := runCLI(ctx, exampleArgs...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", "deploy", "nats", "imapload.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("deploy/nats/imapload.conf is not what the generator writes; regenerate it with\n  go run ./cmd/imapload %s > deploy/nats/imapload.conf",
			strings.Join(exampleArgs, " "))
	}
	if regexp.MustCompile(`nkey: U[A-Z0-9]{55}`).Match(got) {
		t.Errorf("deploy/nats/imapload.conf holds a real key")
	}
}

// exampleArgs write deploy/nats/imapload.conf.
var exampleArgs = []string{"roles", "--producers", "3", "--env-keys"}

// TestRolesEnsureKeepsWhatItMayNotUpdate: a stream or bucket that exists
// with another configuration (an older imapload, other options) is used as
// it is by a role that may not update it; the server refused the update.
func TestRolesEnsureKeepsWhatItMayNotUpdate(t *testing.T) {
	t.Parallel()
	dir := writeRoles(t, "p1")
	ns := startRolesServer(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	agg, p1 := connectRole(t, ns, dir, "aggregator"), connectRole(t, ns, dir, "p1")
	if _, err := bus.EnsureSamples(ctx, agg.js, nil); err != nil {
		t.Fatal(err)
	}
	st, err := bus.EnsureSamples(ctx, agg.js, &bus.Options{MaxAge: time.Hour})
	if err != nil {
		t.Fatalf("EnsureSamples(other MaxAge) as the aggregator: %v", err)
	}
	if got, want := st.CachedInfo().Config.MaxAge, bus.SamplesConfig(nil).MaxAge; got != want {
		t.Errorf("samples stream MaxAge = %v, want %v as it was", got, want)
	}
	agg.awaitDenied(t, "$JS.API.STREAM.UPDATE."+messages.SamplesStream)
	if _, err := bus.EnsureProducers(ctx, p1.js, nil); err != nil {
		t.Fatal(err)
	}
	kv, err := bus.EnsureProducers(ctx, p1.js, &bus.Options{HeartbeatTTL: time.Minute})
	if err != nil {
		t.Fatalf("EnsureProducers(other TTL) as a producer: %v", err)
	}
	if s, err := kv.Status(ctx); err != nil || s.TTL() != bus.ProducersConfig(nil).TTL {
		t.Errorf("registry TTL = %v (%v), want %v as it was", s.TTL(), err, bus.ProducersConfig(nil).TTL)
	}
	p1.awaitDenied(t, "$JS.API.STREAM.UPDATE.KV_"+messages.ProducersBucket)
}

// awaitDenied waits for the server to report a refused publish on subject.
func (rc *roleConn) awaitDenied(t *testing.T, subject string) {
	t.Helper()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case err := <-rc.denied:
		if !strings.Contains(err.Error(), `"`+subject+`"`) {
			t.Errorf("%s: refused %v, want a refusal of %s", rc.role, err, subject)
		}
	case <-timer.C:
		t.Errorf("%s: no refusal of %s within 10s", rc.role, subject)
	}
}

// TestRolesBadFlags: impossible flags are usage errors and write nothing.
func TestRolesBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"no producers", []string{"roles", "--out", "DIR"}},
		{"zero producers", []string{"roles", "--out", "DIR", "--producers", "0"}},
		{"bad id", []string{"roles", "--out", "DIR", "--producers", "p1,p.2"}},
		{"empty id", []string{"roles", "--out", "DIR", "--producers", "p1,,p2"}},
		{"id twice", []string{"roles", "--out", "DIR", "--producers", "p1, p1"}},
		{"id of a role", []string{"roles", "--out", "DIR", "--producers", "operator"}},
		{"bad sync", []string{"roles", "--out", "DIR", "--producers", "2", "--sync", "often"}},
		{"no out", []string{"roles", "--producers", "2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "roles")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, _, err := runCLI(ctx, replaceAll(tt.args, "DIR", dir)...)
			if exitCode(err) != verdict.ExitUsage {
				t.Errorf("imapload %s: %v (exit %d), want a usage error", strings.Join(tt.args, " "), err, exitCode(err))
			}
			if entries, _ := os.ReadDir(dir); len(entries) > 0 {
				t.Errorf("imapload %s wrote %d files into --out", strings.Join(tt.args, " "), len(entries))
			}
		})
	}
}
