package bus_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/internal/testkit/natstest"
	"github.com/imapload/imapload/messages"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// redactCases are NATS URL lists with secrets, as they are given to --nats,
// including the ones that do not parse.
var redactCases = []struct{ name, in, want string }{
	{"no user info", "nats://127.0.0.1:4222", "nats://127.0.0.1:4222"},
	{"user and password", "nats://alice:s3cret@127.0.0.1:4222", "nats://***@127.0.0.1:4222"},
	{"token", "nats://t0ken@host:4222", "nats://***@host:4222"},
	{"list", "nats://a:pw1@h1:4222,nats://b:pw2@h2:4222", "nats://***@h1:4222,nats://***@h2:4222"},
	{"list without schemes", "a:pw1@h1:4222, b:pw2@h2:4222", "***@h1:4222, ***@h2:4222"},
	{"list with one password", "nats://h1:4222,nats://b:pw2@h2:4222", "nats://h1:4222,nats://***@h2:4222"},
	{"no scheme", "alice:Secret1@127.0.0.1:4222", "***@127.0.0.1:4222"},
	{"bad escape", "nats://alice:Sec%zzret1@127.0.0.1:4222", "nats://***@127.0.0.1:4222"},
	{"hash", "nats://alice:Sec#ret1@127.0.0.1:4222", "nats://***@127.0.0.1:4222"},
	{"at sign", "nats://alice:Sec@ret1@127.0.0.1:4222", "nats://***@127.0.0.1:4222"},
	{"slash", "nats://alice:Sec/ret1@127.0.0.1:4222", "nats://***@127.0.0.1:4222"},
	{"comma", "nats://alice:Sec,ret1@127.0.0.1:4222", "nats://***@127.0.0.1:4222"},
	{"scheme in the password", "nats://alice:x://Secret1@h:4222", "nats://***@h:4222"},
	{"tls scheme", "tls://alice:Secret1@h:4222", "tls://***@h:4222"},
}

// redactSecrets are the password fragments of redactCases: none may be shown.
var redactSecrets = []string{"s3cret", "pw1", "pw2", "t0ken", "Secret1", "Sec", "ret1", "alice"}

func TestRedact(t *testing.T) {
	for _, tt := range redactCases {
		t.Run(tt.name, func(t *testing.T) {
			got := bus.Redact(tt.in)
			if got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
			for _, secret := range redactSecrets {
				if strings.Contains(got, secret) {
					t.Errorf("Redact(%q) = %q still holds %q", tt.in, got, secret)
				}
			}
		})
	}
}

// closedPort matches the hosts of redactCases, to point them at a closed port.
var closedPort = regexp.MustCompile(`\b(h1|h2|h|host|127\.0\.0\.1):4222`)

// TestConnectErrorHidesPassword connects to a closed port with each URL of
// redactCases: whether the URL parses or not, the error shows no secret.
func TestConnectErrorHidesPassword(t *testing.T) {
	for _, tt := range redactCases {
		t.Run(tt.name, func(t *testing.T) {
			in := closedPort.ReplaceAllString(tt.in, "127.0.0.1:1")
			nc, err := bus.Connect(in, "test", "")
			if err == nil {
				nc.Close()
				t.Fatalf("Connect(%q) to a closed port succeeded", in)
			}
			for _, secret := range redactSecrets {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("Connect(%q) error %q reveals %q", in, err, secret)
				}
			}
		})
	}
}

func TestConnectErrorKeepsSentinels(t *testing.T) {
	_, err := bus.Connect("nats://alice:s3cret@127.0.0.1:1", "test", "")
	if !errors.Is(err, nats.ErrNoServers) {
		t.Errorf("Connect(closed port) error = %v, want errors.Is nats.ErrNoServers", err)
	}
	_, err = bus.Connect("nats://127.0.0.1:bad", "test", "")
	if err == nil || !strings.Contains(err.Error(), "bad") {
		t.Errorf("Connect(bad port, no secret) error = %v, want the parse error in full", err)
	}
}

func TestEnsureIsIdempotent(t *testing.T) {
	_, nc := natstest.Start(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range 2 { // producers, aggregator and reporter all ensure; the second must agree
		if _, err := bus.EnsureSamples(ctx, js, nil); err != nil {
			t.Fatalf("EnsureSamples: %v", err)
		}
		if _, err := bus.EnsureResults(ctx, js, nil); err != nil {
			t.Fatalf("EnsureResults: %v", err)
		}
		if _, err := bus.EnsureProducers(ctx, js, nil); err != nil {
			t.Fatalf("EnsureProducers: %v", err)
		}
	}
	// A batch is stored once even when published twice with its message id.
	id := messages.BatchMsgID("r1", 1, "p1", 0)
	for range 2 {
		if _, err := js.Publish(ctx, messages.SamplesSubject("r1", 1, "p1"), []byte("x"), jetstream.WithMsgID(id)); err != nil {
			t.Fatalf("Publish: %v", err)
		}
	}
	st, err := js.Stream(ctx, messages.SamplesStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Errorf("samples stream holds %d messages after a duplicate publish, want 1", info.State.Msgs)
	}
}

// TestStepsStreamKeepsCommandsSilently publishes step commands on the core
// subject: the steps stream keeps them, and a request gets only the
// responder's reply, not the stream's PubAck. The same request on a stream
// without NoAck gets both, which shows the check can fail.
func TestStepsStreamKeepsCommandsSilently(t *testing.T) {
	_, nc := natstest.Start(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range 2 {
		if _, err := bus.EnsureSteps(ctx, js, nil); err != nil {
			t.Fatalf("EnsureSteps: %v", err)
		}
	}
	if got := bus.StepsConfig(nil); !got.NoAck || got.MaxMsgs <= 0 || got.MaxBytes <= 0 || got.MaxAge <= 0 {
		t.Errorf("StepsConfig(nil) NoAck = %v, MaxMsgs = %d, MaxBytes = %d, MaxAge = %v; want true and bounded", got.NoAck, got.MaxMsgs, got.MaxBytes, got.MaxAge)
	}
	control := bus.StepsConfig(nil)
	control.Name, control.Subjects, control.NoAck = "CONTROL", []string{"control.step"}, false
	if _, err := js.CreateOrUpdateStream(ctx, control); err != nil {
		t.Fatal(err)
	}
	if got := replies(t, ctx, js, bus.StepsStream, messages.StepSubject); got != 1 {
		t.Errorf("request on %s got %d replies, want 1 (the responder's only)", messages.StepSubject, got)
	}
	if got := replies(t, ctx, js, "CONTROL", "control.step"); got != 2 {
		t.Errorf("request on a stream without NoAck got %d replies, want 2 (responder and PubAck)", got)
	}
}

// replies sends a request on subject, which stream captures and one
// responder answers, and counts the replies once the stream stored it.
func replies(t *testing.T, ctx context.Context, js jetstream.JetStream, stream, subject string) int {
	t.Helper()
	nc := js.Conn()
	sub, err := nc.Subscribe(subject, func(m *nats.Msg) { _ = m.Respond([]byte(`{"accepted":true}`)) })
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	inbox := nc.NewRespInbox()
	replies, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.PublishRequest(subject, inbox, []byte(`{"run":"r1","step":1,"rate":10,"duration":"1s"}`)); err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	for {
		info, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs == 1 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("stream %s never stored the request", stream)
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for ; ; n++ {
		if _, err := replies.NextMsg(200 * time.Millisecond); err != nil {
			return n
		}
	}
}
