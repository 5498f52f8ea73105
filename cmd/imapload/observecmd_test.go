package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/internal/testkit/natstest"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// TestObserveUsage: bad flags are usage errors that say what is wanted,
// before any connection, and never show an endpoint's password.
func TestObserveUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"observe"}, "--scrape is required"},
		{[]string{"observe", "--scrape", "ftp://scraper:s3cret@h/metrics"}, "want an http:// or https:// URL"},
		{[]string{"observe", "--scrape", "http://h/metrics", "--scrape-interval", "10ms"}, "want at least 100ms"},
		{[]string{"observe", "--scrape", "http://h/metrics", "--metric", "a b"}, "not a Prometheus metric name"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, _, err := runCLI(ctx, tc.args...)
		cancel()
		if exitCode(err) != verdict.ExitUsage || !strings.Contains(fmt.Sprint(err), tc.want) || strings.Contains(fmt.Sprint(err), "s3cret") {
			t.Errorf("imapload %s: exit %d, %v; want a usage error saying %q", strings.Join(tc.args, " "), exitCode(err), err, tc.want)
		}
	}
}

// TestObserveCommand: `imapload observe` publishes an endpoint's figures
// of a step sent on imapload.step.
func TestObserveCommand(t *testing.T) {
	ns, nc := natstest.Start(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "# TYPE node_load1 gauge\nnode_load1 0.25\n")
	}))
	defer srv.Close()
	startCLI(t, "observe", "observe", "--nats", ns.ClientURL(), "--id", "cli-obs", "--scrape", srv.URL, "--scrape-interval", "200ms")
	subject := messages.ServerSubject("r1", 1, "cli-obs")
	var f *messages.ServerFigures
	testkit.WaitFor(t, 60*time.Second, "the observer's figures of step 1", func() bool {
		_ = nc.Publish(messages.StepSubject, []byte(`{"run":"r1","step":1,"rate":10,"duration":"500ms","warmup":"0s"}`))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		st, err := js.Stream(ctx, messages.ServerStream)
		if err != nil {
			return false
		}
		m, err := st.GetLastMsgForSubject(ctx, subject)
		if err != nil {
			return false
		}
		f, err = messages.DecodeServerFigures(m.Data)
		return err == nil && f.Final
	})
	if g, ok := f.Endpoints[0].Figure("node_load1"); !ok || g.Value != 0.25 {
		t.Errorf("figures %+v, want node_load1 0.25", f.Endpoints[0])
	}
}
