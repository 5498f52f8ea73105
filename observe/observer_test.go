package observe_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/internal/testkit/natstest"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/observe"
)

// endpoints serves three metrics endpoints for one test: one that counts
// 10 commands per scrape, one that answers 500, one whose text is garbage.
func endpoints(t *testing.T) (good, failing, garbage string) {
	t.Helper()
	var n atomic.Int64
	srv := func(h http.HandlerFunc) string {
		s := httptest.NewServer(h)
		t.Cleanup(s.Close)
		return s.URL
	}
	good = srv(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "# TYPE imapload_imapserver_commands_total counter\nimapload_imapserver_commands_total %d\n", 10*n.Add(1))
	})
	failing = srv(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "broken", http.StatusInternalServerError) })
	garbage = srv(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "imapload_imapserver_commands_total{ 12\n")
	})
	// the password must never reach a message
	return strings.Replace(good, "http://", "http://scraper:s3cret@", 1), failing, garbage
}

// startObserver runs an observer with opts on nc until the test ends,
// and checks that Run returns nil.
func startObserver(t *testing.T, nc *nats.Conn, opts *observe.Options) {
	t.Helper()
	ob, err := observe.New(nc, opts)
	if err != nil {
		t.Fatalf("observe.New() error = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ob.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Observer.Run() = %v, want nil", err)
		}
	})
}

// serverMessages reads every message of the stream on subject.
func serverMessages(t *testing.T, js jetstream.JetStream, subject string) []*messages.ServerFigures {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, messages.ServerStream)
	if err != nil {
		return nil
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []*messages.ServerFigures
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && seq > 0; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil || m.Subject != subject {
			continue
		}
		if strings.Contains(string(m.Data), "s3cret") {
			t.Fatalf("a message holds an endpoint's password: %s", m.Data)
		}
		f, err := messages.DecodeServerFigures(m.Data)
		if err != nil {
			t.Fatalf("DecodeServerFigures(%s) error = %v", m.Data, err)
		}
		out = append(out, f)
	}
	return out
}

// offer publishes a step command until the observer has announced it
// (the observer may not be subscribed yet), and returns the announcement.
func offer(t *testing.T, nc *nats.Conn, js jetstream.JetStream, observer string, step int, duration string) *messages.ServerFigures {
	t.Helper()
	cmd := fmt.Sprintf(`{"run":"r1","step":%d,"rate":10,"duration":%q,"warmup":"0s"}`, step, duration)
	subject := messages.ServerSubject("r1", step, observer)
	var got []*messages.ServerFigures
	testkit.WaitFor(t, 30*time.Second, "the observer's announcement", func() bool {
		if err := nc.Publish(messages.StepSubject, []byte(cmd)); err != nil {
			t.Fatal(err)
		}
		got = serverMessages(t, js, subject)
		return len(got) > 0
	})
	return got[0]
}

// TestObserverPublishesStepFigures: an announcement when the step starts,
// then each endpoint's figures, a failing endpoint counted with its error
// beside the others.
func TestObserverPublishesStepFigures(t *testing.T) {
	_, nc := natstest.Start(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	good, failing, garbage := endpoints(t)
	finals := make(chan *messages.ServerFigures, 4)
	startObserver(t, nc, &observe.Options{ID: "obs1", Endpoints: []string{good, failing, garbage},
		Interval: 200 * time.Millisecond, OnFigures: func(f *messages.ServerFigures) { finals <- f }})
	ann := offer(t, nc, js, "obs1", 1, "1s")
	if ann.Final || len(ann.Endpoints) != 3 || len(ann.Endpoints[0].Figures) != 0 {
		t.Fatalf("announcement %+v, want 3 endpoints without figures, not final", ann)
	}
	var f *messages.ServerFigures
	select {
	case f = <-finals:
	case <-time.After(60 * time.Second):
		t.Fatal("no figures of step 1 within 60s")
	}
	if !f.Final || f.StoppedEarly || f.Step != 1 {
		t.Fatalf("figures final %v, stopped early %v, step %d; want final, whole, step 1", f.Final, f.StoppedEarly, f.Step)
	}
	g := f.Endpoints[0]
	if rate, ok := g.Figure("imapload_imapserver_commands_per_second"); !ok || !(rate.Value > 0) || g.Scrapes < 2 || !strings.Contains(g.URL, "scraper:xxxxx@") {
		t.Errorf("good endpoint %+v: want a positive commands rate from 2 scrapes or more, its password redacted", g)
	}
	for i, want := range map[int]string{1: "HTTP 500", 2: "bad exposition text"} {
		e := f.Endpoints[i]
		if e.Scrapes != 0 || e.Failed < 2 || !strings.Contains(e.Error, want) || len(e.Figures) != 0 {
			t.Errorf("endpoint %d: scrapes %d, failed %d, error %q, %d figures; want every scrape failed with %q",
				i, e.Scrapes, e.Failed, e.Error, len(e.Figures), want)
		}
	}
	if stored := serverMessages(t, js, messages.ServerSubject("r1", 1, "obs1")); len(stored) != 2 {
		t.Errorf("%d messages stored for step 1, want the announcement and the figures", len(stored))
	}
}

// TestObserverCutShort: a new step cuts the one in hand short, and
// stopping the observer cuts the last; both are published as they are.
func TestObserverCutShort(t *testing.T) {
	_, nc := natstest.Start(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	good, _, _ := endpoints(t)
	finals := make(chan *messages.ServerFigures, 4)
	ob, err := observe.New(nc, &observe.Options{ID: "obs2", Endpoints: []string{good}, Interval: 100 * time.Millisecond,
		OnFigures: func(f *messages.ServerFigures) { finals <- f }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ob.Run(ctx) }()
	offer(t, nc, js, "obs2", 1, "1h")
	offer(t, nc, js, "obs2", 2, "1h")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run() = %v, want nil", err)
	}
	close(finals)
	steps := map[int]bool{}
	for f := range finals {
		if !f.StoppedEarly {
			t.Errorf("step %d: not marked stopped early", f.Step)
		}
		steps[f.Step] = true
	}
	if !steps[1] || !steps[2] {
		t.Errorf("figures published for steps %v, want 1 and 2", steps)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	_, nc := natstest.Start(t)
	for _, o := range []*observe.Options{
		nil, {Endpoints: []string{"127.0.0.1:9100"}}, {Endpoints: []string{"ftp://h/metrics"}},
		{ID: "a b", Endpoints: []string{"http://h/metrics"}}, {Endpoints: []string{"http://h/m"}, Interval: time.Millisecond},
		{Endpoints: []string{"http://h/m"}, Metrics: []string{"cpu{mode}"}},
	} {
		if _, err := observe.New(nc, o); !errors.Is(err, observe.ErrOptions) {
			t.Errorf("New(%+v) error = %v, want ErrOptions", o, err)
		}
	}
	if _, err := observe.New(nil, &observe.Options{Endpoints: []string{"http://h/m"}}); !errors.Is(err, observe.ErrNoConn) {
		t.Errorf("New(nil conn) error = %v, want ErrNoConn", err)
	}
}
