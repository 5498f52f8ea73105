package reporter_test

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/internal/testkit/natstest"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/reporter"
)

// startNATS starts an embedded NATS server with JetStream on 127.0.0.1 and
// the results stream, as the aggregator would create it.
func startNATS(t *testing.T) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	_, nc := natstest.Start(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if _, err := bus.EnsureResults(ctx, js, nil); err != nil {
		t.Fatalf("EnsureResults() error = %v", err)
	}
	return nc, js
}

// start runs a new reporter until the returned stop (or the test's end).
func start(t *testing.T, nc *nats.Conn, run string, opts *reporter.Options) (*reporter.Reporter, func() error) {
	t.Helper()
	r, err := reporter.New(nc, run, opts)
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	return startReporter(t, r)
}

// startReporter runs r.Run in a goroutine; stop cancels it and returns what
// Run returned. Stop is also called at the test's end.
func startReporter(t *testing.T, r *reporter.Reporter) (*reporter.Reporter, func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var runErr error
	wg.Go(func() { runErr = r.Run(ctx) })
	stop := sync.OnceValue(func() error {
		cancel()
		wg.Wait()
		return runErr
	})
	t.Cleanup(func() { _ = stop() })
	return r, stop
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal() error = %v", err)
	}
	return b
}

// publishResult publishes a step result as the aggregator does and returns
// its stream sequence.
func publishResult(t *testing.T, js jetstream.JetStream, s messages.StepResult) uint64 {
	t.Helper()
	return publishRaw(t, js, messages.ResultsSubject(s.Run), mustJSON(t, s))
}

var published sync.Map // message ids, so that each publish is new

// publishRaw publishes data on subject and returns its stream sequence.
func publishRaw(t *testing.T, js jetstream.JetStream, subject string, data []byte) uint64 {
	t.Helper()
	msg := nats.NewMsg(subject)
	msg.Header.Set(bus.ContentType, bus.JSONType)
	msg.Data = data
	return publishMsg(t, js, msg)
}

// publishMsg publishes msg with a new message id and returns its stream sequence.
func publishMsg(t *testing.T, js jetstream.JetStream, msg *nats.Msg) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	id := t.Name() + "-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	if _, loaded := published.LoadOrStore(id, true); loaded {
		t.Fatalf("message id %s reused", id)
	}
	ack, err := js.PublishMsg(ctx, msg, jetstream.WithMsgID(id))
	if err != nil {
		t.Fatalf("PublishMsg(%s) error = %v", msg.Subject, err)
	}
	return ack.Sequence
}

// waitPublished polls the last message on run's results subject until it is
// a run report that satisfies ok, and returns it.
func waitPublished(t *testing.T, js jetstream.JetStream, run string, ok func(messages.RunReport) bool) messages.RunReport {
	t.Helper()
	rep, _ := waitPublishedMsg(t, js, run, ok)
	return rep
}

// waitPublishedMsg is waitPublished that also returns the stored message.
func waitPublishedMsg(t *testing.T, js jetstream.JetStream, run string, ok func(messages.RunReport) bool) (messages.RunReport, *jetstream.RawStreamMsg) {
	t.Helper()
	var rep messages.RunReport
	var raw *jetstream.RawStreamMsg
	testkit.WaitFor(t, within, "a run report of "+run, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		st, err := js.Stream(ctx, messages.ResultsStream)
		if err != nil {
			return false
		}
		m, err := st.GetLastMsgForSubject(ctx, messages.ResultsSubject(run))
		if err != nil {
			return false
		}
		rep, raw = messages.RunReport{}, m
		return json.Unmarshal(m.Data, &rep) == nil && rep.Kind == messages.KindRunReport && ok(rep)
	})
	return rep, raw
}

// subjectMsgs counts the messages kept on run's results subject.
func subjectMsgs(t *testing.T, js jetstream.JetStream, run string) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	st, err := js.Stream(ctx, messages.ResultsStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(messages.ResultsSubject(run)))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Subjects[messages.ResultsSubject(run)]
}
