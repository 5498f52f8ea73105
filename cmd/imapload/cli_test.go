package main

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/internal/testkit"
)

// runCLI runs one imapload command in this process, as main does, and returns
// what it printed and its error.
func runCLI(ctx context.Context, args ...string) (stdout, stderr string, err error) {
	var out, errOut testkit.Buffer
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	err = root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// bgCLI is a long-running imapload command (a server, a producer) run in this
// process until the test stops it or ends.
type bgCLI struct {
	name   string
	stdout testkit.Buffer
	stderr testkit.Buffer
	cancel context.CancelFunc
	done   chan struct{} // closed when the command has returned
	err    error         // its error, set before done closes
}

// startCLI runs args in a goroutine with a context the test's cleanup
// cancels; cleanup then waits for the command to return.
func startCLI(t *testing.T, name string, args ...string) *bgCLI {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := &bgCLI{name: name, cancel: cancel, done: make(chan struct{})}
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(&c.stdout)
	root.SetErr(&c.stderr)
	go func() {
		defer close(c.done)
		c.err = root.ExecuteContext(ctx)
	}()
	t.Cleanup(func() {
		c.cancel()
		<-c.done
		if t.Failed() {
			t.Logf("--- %s stdout:\n%s\n--- %s stderr:\n%s", name, c.stdout.String(), name, c.stderr.String())
		}
	})
	return c
}

// waitMatch polls the command's stdout until re matches and returns the last
// group; it fails if the command returns first.
func (c *bgCLI) waitMatch(t *testing.T, re *regexp.Regexp, within time.Duration) string {
	t.Helper()
	var m []string
	testkit.WaitFor(t, within, c.name+" to print "+re.String(), func() bool {
		select {
		case <-c.done:
			t.Fatalf("%s returned (%v) before printing %s\nstderr:\n%s", c.name, c.err, re, c.stderr.String())
		default:
		}
		m = re.FindStringSubmatch(c.stdout.String())
		return m != nil
	})
	return m[len(m)-1]
}

// stop cancels the command's context and returns its error, failing if it
// does not return within the bound.
func (c *bgCLI) stop(t *testing.T, within time.Duration) error {
	t.Helper()
	c.cancel()
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case <-c.done:
		return c.err
	case <-timer.C:
		t.Fatalf("%s did not return within %v of its context ending", c.name, within)
		return nil
	}
}

// Lines the servers print once they listen.
var (
	natsURLRe  = regexp.MustCompile(`listening on (nats://\S+)`)
	imapAddrRe = regexp.MustCompile(`IMAP test server listening on (\S+) `)
)

// startNATS starts an embedded NATS server with JetStream in a temporary
// store, shut down by the test's cleanup.
func startNATS(t *testing.T, o *embedded.NATSOptions) *embedded.NATS {
	t.Helper()
	if o == nil {
		o = &embedded.NATSOptions{}
	}
	o.StoreDir = t.TempDir()
	ns, err := embedded.StartNATS(o)
	if err != nil {
		t.Fatalf("StartNATS: %v", err)
	}
	t.Cleanup(ns.Shutdown)
	return ns
}

// connect opens a client connection closed by the test's cleanup.
func connect(t *testing.T, url string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatalf("nats.Connect(%s): %v", url, err)
	}
	t.Cleanup(nc.Close)
	return nc
}
