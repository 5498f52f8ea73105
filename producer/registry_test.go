package producer_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
)

// TestRunUnregisters checks that a producer's registry entry is gone once
// Run has returned, whether it was idle or running a step when its context
// was cancelled: the fleet must stop counting it at once, not after the TTL.
func TestRunUnregisters(t *testing.T) {
	f := newFleet(t, nil)
	tests := []struct {
		name string
		id   string
		step string // a step command to be running when cancelled, or ""
	}{
		{"idle", "reg-idle", ""},
		{"during a step", "reg-step", `{"run":"reg","step":1,"rate":20,"warmup":"100ms","duration":"30s"}`},
	}
	for _, tt := range tests {
		r := f.start(f.options(tt.id, 2))
		f.waitLive(1) // the producer has made the bucket
		kv, err := f.js.KeyValue(context.Background(), messages.ProducersBucket)
		if err != nil {
			t.Fatalf("KeyValue(%s) error = %v", messages.ProducersBucket, err)
		}
		if tt.step != "" {
			col := f.collect("reg", 1)
			f.request(tt.step, 1)
			testkit.WaitFor(t, 10*time.Second, "batch 0", func() bool { got, _ := col.snapshot(); return len(got[tt.id]) > 0 })
		}
		if err := r.stop(t); err != nil {
			t.Fatalf("%s: Run() error = %v", tt.name, err)
		}
		checkUnregistered(t, kv, tt.name, tt.id)
	}
}

func checkUnregistered(t *testing.T, kv jetstream.KeyValue, name, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	key := messages.ProducerKey(id)
	if e, err := kv.Get(ctx, key); !errors.Is(err, jetstream.ErrKeyNotFound) && !errors.Is(err, jetstream.ErrKeyDeleted) {
		t.Errorf("%s: after Run returned, Get(%q) = %v, %v; want ErrKeyNotFound", name, key, e, err)
	}
	keys, err := kv.Keys(ctx)
	if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
		t.Fatalf("%s: Keys() error = %v", name, err)
	}
	if slices.Contains(keys, key) {
		t.Errorf("%s: after Run returned, Keys() = %q, want no %q", name, keys, key)
	}
}
