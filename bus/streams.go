package bus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrSetup reports a stream or bucket that could not be created or found.
var ErrSetup = errors.New("bus: set-up failed")

// Options size the streams. A nil *Options means the defaults.
type Options struct {
	// Replicas of each stream and bucket (1 on one server; 3 in a cluster).
	Replicas int
	// MaxAge is how long batches and results are kept (default 24h).
	MaxAge time.Duration
	// MaxBytes caps the samples stream (default 1 GiB).
	MaxBytes int64
	// HeartbeatTTL is how long a producer's registry entry lives without a
	// heartbeat (default 10s).
	HeartbeatTTL time.Duration
}

func (o *Options) replicas() int {
	if o == nil || o.Replicas <= 0 {
		return 1
	}
	return o.Replicas
}

func (o *Options) maxAge() time.Duration {
	if o == nil || o.MaxAge <= 0 {
		return 24 * time.Hour
	}
	return o.MaxAge
}

func (o *Options) maxBytes() int64 {
	if o == nil || o.MaxBytes <= 0 {
		return 1 << 30
	}
	return o.MaxBytes
}

// TTL is the registry entry lifetime the options give.
func (o *Options) TTL() time.Duration {
	if o == nil || o.HeartbeatTTL <= 0 {
		return 10 * time.Second
	}
	return o.HeartbeatTTL
}

// DedupeWindow is the samples stream's duplicate window: a batch republished
// within it (same message id) is stored once.
const DedupeWindow = 10 * time.Minute

// SamplesConfig is the configuration of messages.SamplesStream.
func SamplesConfig(o *Options) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        messages.SamplesStream,
		Description: "imapload sample batches (msgpack), one subject per run, step and producer",
		Subjects:    []string{messages.SamplesSubjects},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		MaxAge:      o.maxAge(),
		MaxBytes:    o.maxBytes(),
		MaxMsgSize:  messages.MaxBatchBytes,
		Duplicates:  DedupeWindow,
		Replicas:    o.replicas(),
	}
}

// ResultsConfig is the configuration of messages.ResultsStream.
func ResultsConfig(o *Options) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        messages.ResultsStream,
		Description: "imapload step results and run reports (JSON)",
		Subjects:    []string{messages.ResultsSubjects},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		MaxAge:      o.maxAge(),
		Duplicates:  DedupeWindow,
		Replicas:    o.replicas(),
	}
}

// StepsStream keeps every step command published on messages.StepSubject, so
// that the aggregator can check each batch against the command of its step.
const StepsStream = messages.StepsStream

// Bounds of StepsStream: far more commands than any day of runs sends, in a
// few megabytes; past them the oldest commands go first.
const (
	StepsMaxMsgs  = 10_000
	StepsMaxBytes = 64 << 20
)

// StepsConfig is the configuration of StepsStream. It captures the core
// subject messages.StepSubject with NoAck, so the stream sends no PubAck:
// a request on the subject (`nats req imapload.step …`, the ramp's broadcast)
// gets only the producers' replies.
func StepsConfig(o *Options) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        StepsStream,
		Description: "imapload step commands (JSON) as published on " + messages.StepSubject,
		Subjects:    []string{messages.StepSubject},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		MaxAge:      o.maxAge(),
		MaxMsgs:     StepsMaxMsgs,
		MaxBytes:    StepsMaxBytes,
		MaxMsgSize:  messages.MaxStepJSONBytes,
		NoAck:       true,
		Replicas:    o.replicas(),
	}
}

// ProducersConfig is the configuration of messages.ProducersBucket.
func ProducersConfig(o *Options) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:      messages.ProducersBucket,
		Description: "live imapload producers; entries expire without a heartbeat",
		TTL:         o.TTL(),
		History:     1,
		Storage:     jetstream.MemoryStorage,
		Replicas:    o.replicas(),
	}
}

// EnsureSamples creates the samples stream, or finds it.
func EnsureSamples(ctx context.Context, js jetstream.JetStream, o *Options) (jetstream.Stream, error) {
	return ensureStream(ctx, js, SamplesConfig(o))
}

// EnsureResults creates the results stream, or finds it.
func EnsureResults(ctx context.Context, js jetstream.JetStream, o *Options) (jetstream.Stream, error) {
	return ensureStream(ctx, js, ResultsConfig(o))
}

// EnsureSteps creates the steps stream, or finds it. Whoever may publish a step
// command first (aggregator, producers, ramp) ensures it, so that no command
// goes unrecorded.
func EnsureSteps(ctx context.Context, js jetstream.JetStream, o *Options) (jetstream.Stream, error) {
	return ensureStream(ctx, js, StepsConfig(o))
}

// EnsureProducers creates the producer registry bucket, or finds it (see
// ensureStream for how a bucket with another configuration is handled).
func EnsureProducers(ctx context.Context, js jetstream.JetStream, o *Options) (jetstream.KeyValue, error) {
	return retrySetup(ctx, func(ctx context.Context) (jetstream.KeyValue, error) { return ensureProducers(ctx, js, o) })
}

func ensureProducers(ctx context.Context, js jetstream.JetStream, o *Options) (jetstream.KeyValue, error) {
	cfg := ProducersConfig(o)
	kv, err := js.CreateKeyValue(ctx, cfg)
	if errors.Is(err, jetstream.ErrBucketExists) {
		kv, err = updateOrKeep(ctx, func(ctx context.Context) (jetstream.KeyValue, error) {
			return js.UpdateKeyValue(ctx, cfg)
		}, func(ctx context.Context) (jetstream.KeyValue, error) { return js.KeyValue(ctx, cfg.Bucket) })
	}
	if err != nil {
		return nil, fmt.Errorf("%w: bucket %s: %w", ErrSetup, messages.ProducersBucket, err)
	}
	return kv, nil
}

// updateWait bounds the update of a stream whose configuration differs. A
// role without the permission to update (see roles.go) gets no answer at
// all, as the server drops a request it refuses, and keeps the stream as it is.
const updateWait = 2 * time.Second

// ensureStream creates the stream, waiting while JetStream is unavailable
// (retrySetup, setup.go); creating one that exists with the same
// configuration returns it, so the roles need no permission to update. A
// stream with another configuration (an older imapload, other --replicas)
// is updated where that is permitted and otherwise used as it is. When
// several processes create it at once, the server may refuse one for storage
// it reserves twice ("insufficient storage resources") although the stream
// is there: a stream that exists is then used as it is.
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	return retrySetup(ctx, func(ctx context.Context) (jetstream.Stream, error) { return createOrFind(ctx, js, cfg) })
}

func createOrFind(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	st, err := js.CreateStream(ctx, cfg)
	switch {
	case err == nil:
		return st, nil
	case errors.Is(err, jetstream.ErrStreamNameAlreadyInUse):
		st, err = updateOrKeep(ctx, func(ctx context.Context) (jetstream.Stream, error) {
			return js.UpdateStream(ctx, cfg)
		}, func(ctx context.Context) (jetstream.Stream, error) { return js.Stream(ctx, cfg.Name) })
	default:
		if st, serr := js.Stream(ctx, cfg.Name); serr == nil {
			return st, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: stream %s: %w", ErrSetup, cfg.Name, err)
	}
	return st, nil
}

// updateOrKeep tries update for at most updateWait and, when it fails (not
// permitted, or refused by the server), returns what keep finds.
func updateOrKeep[T any](ctx context.Context, update, keep func(context.Context) (T, error)) (T, error) {
	uctx, cancel := context.WithTimeout(ctx, updateWait)
	v, err := update(uctx)
	cancel()
	if err == nil {
		return v, nil
	}
	if v, kerr := keep(ctx); kerr == nil {
		return v, nil
	}
	return v, err
}

// Headers of the contract.
const (
	// ContentType is the header naming a message's encoding.
	ContentType = "Content-Type"
	// MsgpackType is the Content-Type of sample batches.
	MsgpackType = "application/msgpack"
	// JSONType is the Content-Type of results.
	JSONType = "application/json"
)
