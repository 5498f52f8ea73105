package bus

import (
	"context"
	"fmt"

	"github.com/imapload/imapload/messages"
	"github.com/nats-io/nats.go/jetstream"
)

// ServerMaxBytes caps messages.ServerStream: two messages of at most
// messages.MaxServerBytes per observer and step, so thousands of steps fit;
// past it the oldest go first.
const ServerMaxBytes = 256 << 20

// ServerStreamConfig is the configuration of messages.ServerStream, where the
// observers (imapload observe) publish the server's figures of each step.
func ServerStreamConfig(o *Options) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        messages.ServerStream,
		Description: "imapload server figures (JSON) scraped by observers, one subject per run, step and observer",
		Subjects:    []string{messages.ServerSubjects},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		MaxAge:      o.maxAge(),
		MaxBytes:    ServerMaxBytes,
		MaxMsgSize:  messages.MaxServerBytes,
		Duplicates:  DedupeWindow,
		Replicas:    o.replicas(),
	}
}

// EnsureServer creates the server figures' stream, or finds it. The
// observers ensure it; the aggregator only reads it when it is there.
func EnsureServer(ctx context.Context, js jetstream.JetStream, o *Options) (jetstream.Stream, error) {
	return ensureStream(ctx, js, ServerStreamConfig(o))
}

// RoleObserverPrefix names an observer's role: "observer-<id>", so that an
// observer id never collides with a producer's.
const RoleObserverPrefix = "observer-"

// ObserverPermissions are the permissions of the observer with id: its
// own figures in messages.ServerStream and the step subject, which it only
// listens to (it answers no request).
func ObserverPermissions(id string) (Permissions, error) {
	if err := messages.ValidName(id); err != nil {
		return Permissions{}, fmt.Errorf("bus: observer role: %w", err)
	}
	pub := []string{"imapload.server.*.*." + id, "$JS.API.INFO"}
	pub = append(pub, ensureStreamAPI(messages.ServerStream)...)
	return Permissions{
		Role: RoleObserverPrefix + id, Doc: "observer " + id + ": publishes the server's figures of each step",
		Publish: pub, Subscribe: []string{messages.StepSubject, inboxes},
	}, nil
}

// serverReadAPI lets the aggregator look messages.ServerStream up and read
// it, without creating it.
func serverReadAPI() []string {
	return append([]string{"$JS.API.STREAM.INFO." + messages.ServerStream}, readStreamAPI(messages.ServerStream)...)
}
