package aggregator

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/messages"
)

// observe publishes what an observer would: the announcement of a step,
// and its figures when final.
func (tb *testBus) observe(t *testing.T, run string, step int, observer string, final bool) {
	t.Helper()
	if _, err := bus.EnsureServer(testCtx(t), tb.js, nil); err != nil {
		t.Fatal(err)
	}
	f := messages.ServerFigures{Kind: messages.KindServerFigures, Run: run, Step: step, Observer: observer, Final: final,
		Interval: messages.Duration(time.Second), Window: messages.Duration(time.Second),
		Endpoints: []messages.EndpointFigures{{URL: "http://127.0.0.1:9100/metrics", Figures: []messages.Figure{}}}}
	if final {
		f.Endpoints[0].Scrapes = 2
		f.Endpoints[0].Figures = []messages.Figure{{Name: "node_cpu_busy_cores", Kind: messages.FigureRate, Value: 1.5, Min: 1, Max: 2}}
	}
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	m := nats.NewMsg(messages.ServerSubject(run, step, observer))
	m.Data = data
	if _, err := tb.js.PublishMsg(testCtx(t), m, jetstream.WithMsgID(messages.ServerMsgID(run, step, observer, final))); err != nil {
		t.Fatal(err)
	}
}

// TestServerFiguresAttached: the result of a step carries the figures of
// every observer that announced it, by observer.
func TestServerFiguresAttached(t *testing.T) {
	t.Parallel()
	tb := startBus(t)
	tb.command(t, "r1", 1)
	for _, o := range []string{"mail2", "mail1"} {
		tb.observe(t, "r1", 1, o, false)
		tb.observe(t, "r1", 1, o, true)
	}
	for _, b := range stepBatches("r1", 1, []string{"a"}, 2) {
		tb.publish(t, b, "")
	}
	startAgg(t, tb.nc, &Options{Durable: "agg-server"})
	got, _ := tb.waitResult(t, "r1", 1, 20*time.Second)
	s := got.Server
	if s == nil || len(s.Observers) != 2 || s.Observers[0] != "mail1" || len(s.Missing) != 0 || len(s.Endpoints) != 2 {
		t.Fatalf("result's server figures %+v, want mail1's and mail2's endpoints", s)
	}
	if e := s.Endpoints[0]; e.Observer != "mail1" || len(e.Figures) != 1 || e.Figures[0].Value != 1.5 {
		t.Errorf("first endpoint %+v, want mail1's with node_cpu_busy_cores 1.5", e)
	}
}

// TestServerFiguresMissing: an observer that announced the step and sent
// no figures delays the result ServerWait at most, and is named missing.
func TestServerFiguresMissing(t *testing.T) {
	t.Parallel()
	tb := startBus(t)
	tb.command(t, "r1", 1)
	tb.observe(t, "r1", 1, "mail1", false)
	for _, b := range stepBatches("r1", 1, []string{"a"}, 2) {
		tb.publish(t, b, "")
	}
	startAgg(t, tb.nc, &Options{Durable: "agg-server-missing", ServerWait: 500 * time.Millisecond})
	got, _ := tb.waitResult(t, "r1", 1, 20*time.Second)
	if s := got.Server; s == nil || len(s.Observers) != 0 || len(s.Missing) != 1 || s.Missing[0] != "mail1" {
		t.Fatalf("result's server figures %+v, want mail1 missing", s)
	}
}

// TestNoObserverNoServer: a step no observer announced is published at
// once, without server figures, whether the stream exists or not.
func TestNoObserverNoServer(t *testing.T) {
	t.Parallel()
	tb := startBus(t)
	for step := 1; step <= 2; step++ {
		tb.command(t, "r1", step)
		for _, b := range stepBatches("r1", step, []string{"a"}, 2) {
			tb.publish(t, b, "")
		}
	}
	tb.observe(t, "r1", 7, "mail1", true) // the stream exists, with another step's figures
	startAgg(t, tb.nc, &Options{Durable: "agg-no-server", ServerWait: time.Hour})
	for step := 1; step <= 2; step++ {
		if got, _ := tb.waitResult(t, "r1", step, 20*time.Second); got.Server != nil {
			t.Errorf("step %d: server figures %+v, want none", step, got.Server)
		}
	}
}
