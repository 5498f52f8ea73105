package producer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/messages"
)

// registryTimeout bounds one registry operation.
const registryTimeout = 5 * time.Second

// registry is the producer's entry in messages.ProducersBucket. The bucket's
// TTL expires entries that are not re-put, so the keys present are the live
// producers, which is what a fleet rate is divided by. The bucket is in
// memory storage, so a NATS restart loses it: put and recreate bring it back.
type registry struct {
	kv     jetstream.KeyValue
	ensure func(context.Context) error // creates the bucket (bus.EnsureProducers)

	mu   sync.Mutex
	info messages.ProducerInfo
}

func newRegistry(kv jetstream.KeyValue, ensure func(context.Context) error, id, target, instance string) *registry {
	host, _ := os.Hostname()
	return &registry{kv: kv, ensure: ensure, info: messages.ProducerInfo{
		ID: id, Host: host, PID: os.Getpid(), Instance: instance, Started: time.Now().UTC(), Target: target,
	}}
}

// claim returns ErrIDLive when another process's entry for this id is
// live: it is re-put (its revision moves) within one and a half heartbeats.
// An entry left by a process that is gone does not move, and is taken
// over. Two processes with one id would share one registry key (the fleet
// counted one short) and, but for the instance, one message-id sequence.
func (r *registry) claim(ctx context.Context, every time.Duration) error {
	key := messages.ProducerKey(r.info.ID)
	first, other, err := r.other(ctx, key)
	if err != nil || first == nil {
		return nil // no entry, or none to read: nothing to refuse
	}
	t := time.NewTimer(every + every/2)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	}
	again, other2, err := r.other(ctx, key)
	if err != nil || again == nil || again.Revision() == first.Revision() {
		return nil
	}
	other = other2
	return fmt.Errorf("%w: id %s heartbeats from host %s pid %d (instance %s, started %s); this process is host %s pid %d (instance %s): give every producer its own --id",
		ErrIDLive, r.info.ID, other.Host, other.PID, other.Instance, other.Started.Format(time.RFC3339), r.info.Host, r.info.PID, r.info.Instance)
}

// other reads key's entry when it is another process's (another instance).
func (r *registry) other(ctx context.Context, key string) (jetstream.KeyValueEntry, messages.ProducerInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, registryTimeout)
	defer cancel()
	e, err := r.kv.Get(ctx, key)
	if err != nil {
		return nil, messages.ProducerInfo{}, err
	}
	var info messages.ProducerInfo
	if err := json.Unmarshal(e.Value(), &info); err != nil || info.Instance == r.info.Instance {
		return nil, info, err
	}
	return e, info, nil
}

// put writes the entry now (a registration or a heartbeat). When the bucket
// is gone it recreates it and writes again, once.
func (r *registry) put(ctx context.Context) error {
	err := r.putOnce(ctx)
	if !bucketGone(err) {
		return err
	}
	return r.recreate(ctx)
}

// recreate creates the bucket again and writes the entry into it.
func (r *registry) recreate(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, registryTimeout)
	defer cancel()
	if err := r.ensure(ctx); err != nil {
		return err
	}
	return r.putOnce(ctx)
}

func (r *registry) putOnce(ctx context.Context) error {
	r.mu.Lock()
	r.info.Heartbeat = time.Now().UTC()
	b, err := json.Marshal(r.info)
	key := messages.ProducerKey(r.info.ID)
	r.mu.Unlock()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, registryTimeout)
	defer cancel()
	_, err = r.kv.Put(ctx, key, b)
	return err
}

// bucketGone reports whether err says the bucket's stream does not exist,
// as after a restart of a NATS server that held it in memory. KeyValue.Keys
// reports it with the nats package's error, Put with no responders.
func bucketGone(err error) bool {
	return errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, nats.ErrStreamNotFound) ||
		errors.Is(err, jetstream.ErrBucketNotFound) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrNoResponders)
}

// setStep notes the step being run (run "" when none) for the next put.
func (r *registry) setStep(run string, step int) {
	r.mu.Lock()
	r.info.Run, r.info.Step = run, step
	r.mu.Unlock()
}

// live counts the registered producers, this one included.
func (r *registry) live(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, registryTimeout)
	defer cancel()
	keys, err := r.kv.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return 1, nil
	}
	if err != nil {
		return 0, err
	}
	if !slices.Contains(keys, messages.ProducerKey(r.info.ID)) {
		return len(keys) + 1, nil // our entry expired or is not written yet: we run all the same
	}
	return len(keys), nil
}

// remove deletes the entry, so the fleet stops counting this producer at once
// instead of after the TTL.
func (r *registry) remove(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, registryTimeout)
	defer cancel()
	return r.kv.Delete(ctx, messages.ProducerKey(r.info.ID))
}
