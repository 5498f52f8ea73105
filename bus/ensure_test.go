package bus_test

import (
	"context"
	"sync"
	"testing"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/embedded"
	"github.com/nats-io/nats.go/jetstream"
)

// TestEnsureConcurrently: processes that start together (the demo's producers,
// a fleet) ensure the same streams at once; the server may refuse the
// updates for storage it reserves twice, and none of them may fail for it.
func TestEnsureConcurrently(t *testing.T) {
	for range 15 {
		ns, err := embedded.StartNATS(&embedded.NATSOptions{StoreDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 20)
		for range 6 {
			wg.Go(func() {
				nc, err := ns.Connect()
				if err != nil {
					errs <- err
					return
				}
				defer nc.Close()
				js, _ := jetstream.New(nc)
				if _, err := bus.EnsureSteps(context.Background(), js, nil); err != nil {
					errs <- err
				}
				if _, err := bus.EnsureSamples(context.Background(), js, nil); err != nil {
					errs <- err
				}
				if _, err := bus.EnsureResults(context.Background(), js, nil); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		ns.Shutdown()
	}
}
