package pipeline_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/pipeline"
	"github.com/imapload/imapload/producer"
	"github.com/nats-io/nats.go"
)

// TestRunListen: with Listen the embedded NATS admits only its NKey users;
// a producer that joins over TCP with the seed written for it is offered
// load in the same step as the local one, and both are in its producers.
func TestRunListen(t *testing.T) {
	srv := startIMAP(t)
	o := shortRun(t, srv, 1)
	o.Listen, o.ExpectProducers, o.StoreDir = "127.0.0.1:0", 1, t.TempDir()
	remote := &remoteProducer{t: t, tmpl: producerTemplate(t, srv)}
	o.OnReady = remote.join
	results, err := runCtx(t, o)
	remote.stop()
	if err != nil {
		t.Fatalf("Run() error = %v", err)
	}
	checkProducers(t, results, []string{o.Run + "-p1", "remote-1"})
}

// remoteProducer is a producer of this test process that joins the run as
// one on another host would: over TCP, with only the URL and its seed.
type remoteProducer struct {
	t      *testing.T
	tmpl   producer.Options
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (r *remoteProducer) join(e pipeline.Endpoint) {
	t := r.t
	if !e.Embedded || e.Credentials == "" || len(e.Remote) != 1 {
		t.Fatalf("OnReady endpoint = %+v, want an embedded NATS with credentials and one remote id", e)
	}
	checkSeeds(t, e)
	if nc, err := nats.Connect(e.URL); err == nil {
		nc.Close()
		t.Errorf("nats.Connect(%s) without credentials succeeded; want it refused", e.URL)
	}
	seed, err := nats.NkeyOptionFromSeed(bus.SeedFile(e.Credentials, e.Remote[0]))
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(e.URL, seed)
	if err != nil {
		t.Fatalf("connect with the remote seed: %v", err)
	}
	o := r.tmpl
	o.ID = e.Remote[0]
	p, err := producer.New(nc, &o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer nc.Close()
		_ = p.Run(ctx)
	}()
}

func (r *remoteProducer) stop() {
	if r.cancel != nil {
		r.cancel()
	}
	r.wg.Wait()
}

// checkSeeds: every role's seed is there, mode 0600, in a 0700 directory.
func checkSeeds(t *testing.T, e pipeline.Endpoint) {
	t.Helper()
	if fi, err := os.Stat(e.Credentials); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("credentials directory %s: %v, want mode 0700", e.Credentials, err)
	}
	for _, role := range append([]string{bus.RoleAggregator, bus.RoleReporter, bus.RoleOperator}, e.Remote...) {
		fi, err := os.Stat(bus.SeedFile(e.Credentials, role))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("seed of %s: %v, want a file of mode 0600", role, err)
		}
	}
}

// TestRunProducersMissing: expected producers that never come end the run
// after ProducerWait, with ErrProducers, before any step.
func TestRunProducersMissing(t *testing.T) {
	srv := startIMAP(t)
	o := shortRun(t, srv, 1)
	o.Listen, o.ExpectProducers, o.ProducerWait = "127.0.0.1:0", 1, 500*time.Millisecond
	results, err := runCtx(t, o)
	if !errors.Is(err, pipeline.ErrProducers) || len(results) > 0 {
		t.Errorf("Run() = %d results, %v; want none and ErrProducers", len(results), err)
	}
}
