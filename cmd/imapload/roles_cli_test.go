package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/messages"
)

// TestRolesOperatorNATSCLI drives the fleet as docs/deploy.md says, with the
// nats CLI and the operator's seed: the registry is listed and read, a step
// request reaches a producer and its answer comes back, and results are
// read; the server logs no permission violation.
func TestRolesOperatorNATSCLI(t *testing.T) {
	t.Parallel()
	tool := natsTool(t)
	dir := writeRoles(t, "p1")
	ns, log := startRolesServerLog(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	agg, p1 := connectRole(t, ns, dir, "aggregator"), connectRole(t, ns, dir, "p1")
	ensureAll(t, ctx, agg, p1)
	kv, err := bus.EnsureProducers(ctx, p1.js, nil)
	if err == nil {
		_, err = kv.Put(ctx, messages.ProducerKey("p1"), []byte(`{"id":"p1"}`))
	}
	if err != nil {
		t.Fatalf("p1 registers: %v", err)
	}
	sub, err := p1.nc.Subscribe(messages.StepSubject, func(m *nats.Msg) { _ = m.Respond([]byte(`{"producer":"p1","accepted":true}`)) })
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if _, err := agg.js.Publish(ctx, messages.ResultsSubject("r1"), []byte(`{"kind":"step_result","run":"r1","step":1}`)); err != nil {
		t.Fatal(err)
	}

	op := []string{"--nkey", dir + "/operator.nk"}
	url := ns.ClientURL()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"kv", "ls"}, messages.ProducersBucket},
		{[]string{"kv", "ls", messages.ProducersBucket}, "p1"},
		{[]string{"kv", "get", messages.ProducersBucket, "p1", "--raw"}, `"id":"p1"`},
		{[]string{"req", messages.StepSubject, `{"run":"r1","step":2,"rate":10,"duration":"1s"}`, "--replies", "1", "--timeout", "10s"}, `"accepted":true`},
		{[]string{"sub", "--stream", messages.ResultsStream, "--all", messages.ResultsSubject("r1"), "--count", "1", "--raw"}, `"step_result"`},
	} {
		out := runNATSTool(t, tool, url, append(op, c.args...)...)
		if !strings.Contains(out, c.want) {
			t.Errorf("nats %s printed:\n%s\nwant %q", strings.Join(c.args, " "), out, c.want)
		}
	}
	if strings.Contains(strings.ToLower(log.String()), "violation") {
		t.Errorf("the server logged permission violations:\n%s", violations(log.String()))
	}
}
