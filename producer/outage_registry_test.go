package producer_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/producer"
)

// outageFleet is a fleet whose NATS server the test restarts: the test's
// and the producers' connections reconnect by themselves.
func outageFleet(t *testing.T) (*fleet, *producer.OutageNATS) {
	t.Helper()
	srv := producer.StartOutageNATS(t)
	imap, err := embedded.StartIMAP(&embedded.IMAPOptions{Users: 4})
	if err != nil {
		t.Fatalf("embedded.StartIMAP() error = %v", err)
	}
	t.Cleanup(func() { imap.Close() })
	nc := srv.Connect()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream.New() error = %v", err)
	}
	return &fleet{t: t, imap: imap, nc: nc, js: js, users: 4}, srv
}

// startOn runs a producer on its own reconnecting connection to srv; it is
// stopped at the end of the test if the test did not stop it.
func (f *fleet) startOn(srv *producer.OutageNATS, opts *producer.Options) *running {
	f.t.Helper()
	p, err := producer.New(srv.Connect(), opts)
	if err != nil {
		f.t.Fatalf("producer.New() error = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{p: p, cancel: cancel, errc: make(chan error, 1)}
	go func() { r.errc <- p.Run(ctx) }()
	f.t.Cleanup(func() { r.stop(f.t) })
	return r
}

// TestOutageRegistryRecreated restarts NATS under an idle producer, having
// deleted the samples stream too: the registry bucket (memory storage) and
// the stream are gone after the restart, and the producer must recreate both
// and register again by itself, so that a step command without `producers`
// is accepted, and its batches stored, without restarting the producer.
func TestOutageRegistryRecreated(t *testing.T) {
	t.Parallel() // waits on NATS outages and timeouts, with servers of its own
	f, srv := outageFleet(t)
	f.startOn(srv, f.options("o1", 2))
	f.waitLive(1)
	if err := f.js.DeleteStream(context.Background(), messages.SamplesStream); err != nil {
		t.Fatalf("DeleteStream(%s) error = %v", messages.SamplesStream, err)
	}
	srv.Restart(f.nc, 0)
	f.waitLive(1)
	testkit.WaitFor(t, 10*time.Second, "the samples stream to be recreated", func() bool {
		_, err := f.js.Stream(context.Background(), messages.SamplesStream)
		return err == nil
	})
	bs := f.runStep("o1", "out", 1, `"rate":20,"warmup":"100ms","duration":"500ms","stagger":"50ms"`)
	if len(bs) == 0 || bs[0].Info.Producers != 1 {
		t.Errorf("step after the restart: %d batches, want them shared among 1 producer", len(bs))
	}
}

// TestOutageRegistryBucketDeleted deletes the registry bucket under a
// running producer, as a restart does. With a short heartbeat the producer
// registers again on its next beat; with a long one, a step command without
// `producers` arriving first makes it recreate the bucket and count again
// instead of refusing.
func TestOutageRegistryBucketDeleted(t *testing.T) {
	t.Parallel() // waits on NATS outages and timeouts, with servers of its own
	tests := []struct {
		name      string
		heartbeat time.Duration
		step      bool // send a step command right after the deletion
	}{
		{"next heartbeat", 200 * time.Millisecond, false},
		{"step command first", 9 * time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := outageFleet(t)
			opts := f.options("o1", 2)
			opts.Heartbeat = tt.heartbeat
			f.startOn(srv, opts)
			f.waitLive(1)
			if err := f.js.DeleteKeyValue(context.Background(), messages.ProducersBucket); err != nil {
				t.Fatalf("DeleteKeyValue(%s) error = %v", messages.ProducersBucket, err)
			}
			if tt.step {
				cmd := `{"run":"out","step":1,"rate":20,"warmup":"100ms","duration":"300ms"}`
				if rep := f.request(cmd, 1)[0]; !rep.Accepted || rep.Producers != 1 {
					t.Errorf("reply to a step command with the bucket gone = %+v, want accepted for 1 producer", rep)
				}
			}
			f.waitLive(1)
		})
	}
}

// TestOutageDuringStep restarts NATS for 3 s in the middle of a 4 s step
// (the retry budget is 30 s): the producer's batches are all stored once
// NATS is back, none counted lost, numbered without gaps up to the final.
func TestOutageDuringStep(t *testing.T) {
	t.Parallel() // waits on NATS outages and timeouts, with servers of its own
	f, srv := outageFleet(t)
	if _, err := bus.EnsureSamples(context.Background(), f.js, nil); err != nil {
		t.Fatalf("bus.EnsureSamples() error = %v", err)
	}
	f.startOn(srv, f.options("o1", 2))
	f.waitLive(1)
	cmd := `{"run":"out","step":1,"rate":20,"warmup":"100ms","duration":"4s","stagger":"50ms"}`
	if rep := f.request(cmd, 1)[0]; !rep.Accepted {
		t.Fatalf("reply to %s = %+v, want accepted", cmd, rep)
	}
	srv.Restart(f.nc, 3*time.Second)
	col := f.collect("out", 1) // after the restart: it reads the stream from its start
	bs := col.finals(t, 1, 60*time.Second)["o1"]
	var lost uint64
	for _, b := range bs {
		lost += b.Health.Lost
	}
	if lost != 0 || len(bs) < 3 {
		t.Errorf("%d batches stored, carrying lost %d; want every batch stored (at least 3) and none lost", len(bs), lost)
	}
}
