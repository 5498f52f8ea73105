package producer_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/producer"
)

// TestProducerIDLive: a second producer started with the id of a live one
// (one environment variable copied into two containers) refuses to start,
// naming both processes, instead of sharing its registry key and
// message-id sequence; the live one's batches carry its instance in their
// message ids, so no other process's can deduplicate them.
func TestProducerIDLive(t *testing.T) {
	f := newFleet(t, &embedded.IMAPOptions{Users: 4})
	f.start(f.options("c1", 2))
	f.waitLive(1)
	nc, err := f.nats.Connect()
	if err != nil {
		t.Fatalf("Connect() error = %v", err)
	}
	defer nc.Close()
	twin, err := producer.New(nc, f.options("c1", 2))
	if err != nil {
		t.Fatalf("producer.New() error = %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = twin.Run(ctx)
	if !errors.Is(err, producer.ErrIDLive) {
		t.Fatalf("second producer c1: Run() = %v, want ErrIDLive", err)
	}
	for _, want := range []string{"id c1 heartbeats from host ", "this process is host ", "give every producer its own --id"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("second producer c1: Run() error = %q, want it to say %q", err, want)
		}
	}
	f.runStep("c1", "ids", 1, `"rate":20,"warmup":"100ms","duration":"500ms","stagger":"50ms"`)
	st, err := f.js.Stream(ctx, messages.SamplesStream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetLastMsgForSubject(ctx, messages.SamplesSubject("ids", 1, "c1"))
	if err != nil {
		t.Fatalf("GetLastMsgForSubject() error = %v", err)
	}
	if id := m.Header.Get(jetstream.MsgIDHeader); strings.Count(id, "-") != 4 || !strings.HasPrefix(id, "ids-1-c1-") {
		t.Errorf("batch message id = %q, want ids-1-c1-<instance>-<seq>", id)
	}
}
