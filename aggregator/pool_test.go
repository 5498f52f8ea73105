package aggregator

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

func TestPoolAddErrors(t *testing.T) {
	good := func() *messages.SampleBatch { return stepBatches("r1", 1, []string{"a"}, 1)[1] }
	tests := []struct {
		name   string
		batch  func() *messages.SampleBatch
		want   error
		wantAs error // a second error the first wraps, if any
	}{
		{name: "nil", batch: func() *messages.SampleBatch { return nil }, want: ErrInvalidBatch},
		{name: "other run", batch: func() *messages.SampleBatch { b := good(); b.Run = "r2"; return b }, want: ErrWrongStep},
		{name: "other step", batch: func() *messages.SampleBatch { b := good(); b.Step = 2; return b }, want: ErrWrongStep},
		{name: "invalid", batch: func() *messages.SampleBatch { b := good(); b.Completed = b.Scheduled + 1; return b },
			want: ErrInvalidBatch, wantAs: messages.ErrInvalidBatch},
		{name: "bad sketch", batch: func() *messages.SampleBatch {
			b := good()
			b.Phases[len(b.Phases)-1].Service.Sketch = messages.SketchBytes{0x02} // an index-mapping flag and nothing after it
			return b
		}, want: ErrInvalidBatch, wantAs: messages.ErrInvalidSketch},
		{name: "negative latencies", batch: func() *messages.SampleBatch {
			b := good()
			s := messages.NewSketch()
			_ = s.Add(-5)
			b.Phases[0].Response.Sketch = messages.EncodeSketch(nil, s)
			return b
		}, want: ErrInvalidBatch, wantAs: messages.ErrInvalidSketch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := poolOf(t, stepBatches("r1", 1, []string{"z"}, 1))
			before := canonical(t, p.Result())
			added, err := p.Add(tt.batch())
			if added || !errors.Is(err, tt.want) || (tt.wantAs != nil && !errors.Is(err, tt.wantAs)) {
				t.Errorf("Pool.Add() = %v, %v; want false, an error wrapping %v and %v", added, err, tt.want, tt.wantAs)
			}
			if after := canonical(t, p.Result()); after != before {
				t.Errorf("Pool.Result() changed after a refused Add:\n%s\nwant\n%s", after, before)
			}
		})
	}
}

func TestPoolDuplicates(t *testing.T) {
	batches := stepBatches("r1", 1, []string{"a", "b"}, 2)
	p := poolOf(t, batches)
	want := p.Result()
	for _, b := range batches[:3] {
		if added, err := p.Add(b); added || err != nil {
			t.Fatalf("Pool.Add(repeat of %s #%d) = %v, %v; want false, nil", b.Producer, b.Seq, added, err)
		}
	}
	got := p.Result()
	if got.Duplicates != 3 || got.Batches != want.Batches || got.Succeeded != want.Succeeded || got.Phases["fetch"].Count != want.Phases["fetch"].Count {
		t.Errorf("Pool.Result() after repeats: duplicates %d, batches %d, succeeded %d, fetch count %d; want 3, %d, %d, %d",
			got.Duplicates, got.Batches, got.Succeeded, got.Phases["fetch"].Count, want.Batches, want.Succeeded, want.Phases["fetch"].Count)
	}
}

// TestPoolOrderIndependent adds the same batches in many orders: a replay
// after a restart sees them in stream order, the first run did not.
func TestPoolOrderIndependent(t *testing.T) {
	f := makeFleet(t, fleetSpec{producers: 12, batches: 3, reservoir: 32, minCount: 200, seed: 3,
		phases: []messages.Phase{messages.Login, messages.Fetch}})
	want := canonical(t, poolOf(t, f.batches).Result())
	rng := rand.New(rand.NewPCG(9, 9))
	for range 5 {
		shuffled := slices.Clone(f.batches)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if got := canonical(t, poolOf(t, shuffled).Result()); got != want {
			t.Fatalf("Pool.Result() depends on the order of Add:\n%s\nwant\n%s", got, want)
		}
	}
}

func TestPoolTotals(t *testing.T) {
	info := messages.StepInfo{FleetRate: 200, Rate: 100, Producers: 2, Duration: int64(2 * time.Second)}
	var batches []*messages.SampleBatch
	for i, id := range []string{"b", "a"} {
		rec := recorder.New("r1", 1, id, info, &recorder.Options{Seed: 1})
		for range 100 * (i + 1) {
			rec.Record(messages.Fetch, time.Millisecond, time.Millisecond)
			rec.Scheduled(true)
		}
		rec.Fail(messages.Fetch, errors.New("NO [SERVERBUG] "+id))
		rec.Scheduled(false)
		for range 3 {
			rec.Drop(messages.Store)
		}
		rec.RecordTLS(2 * time.Millisecond)
		rec.Lag(time.Duration(5*(i+1)) * time.Millisecond)
		batches = append(batches, rec.Cut(0, 2*time.Second, id == "a", messages.Health{CPU: 0.5 * float64(i+1), Sessions: uint32(4 + i), Lost: 1}))
	}
	r := poolOf(t, batches).Result()
	checks := []struct {
		name      string
		got, want float64
	}{
		{"scheduled", float64(r.Scheduled), 306}, {"succeeded", float64(r.Succeeded), 300},
		{"dropped", float64(r.Dropped), 6}, {"attempted", float64(r.Attempted), 300},
		{"target_rate", r.TargetRate, 200}, {"delivered_rate", r.DeliveredRate, 150}, {"ratio", r.Ratio, 0.75},
		{"lost", float64(r.Lost), 2}, {"batches", float64(r.Batches), 2},
		{"health.cpu_max", r.Health.CPUMax, 1}, {"health.sessions_max", float64(r.Health.SessionsMax), 9},
		{"health.lag_p99_max", r.Health.LagP99Max, 10}, {"duration", r.Duration.D().Seconds(), 2},
		{"phases.fetch.attempted", float64(r.Phases["fetch"].Attempted), 302},
		{"phases.store.dropped", float64(r.Phases["store"].Dropped), 6},
		{"per_producer[a].share", r.PerProducer[0].Share, 2.0 / 3}, {"per_producer[a].error_share", r.PerProducer[0].ErrorShare, 0.5},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 0.011*math.Abs(c.want) {
			t.Errorf("Pool.Result() %s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if tls := r.Phases["dial"].TLS; tls == nil || math.Abs(tls.P50-2) > 0.02 {
		t.Errorf("Pool.Result() dial TLS = %+v, want P50 ≈ 2 ms", tls)
	}
	if !slices.Equal(r.Producers, []string{"a", "b"}) || !slices.Equal(r.Missing, []string{"b"}) || r.Complete {
		t.Errorf("Pool.Result() producers %v, missing %v, complete %v; want [a b], [b], false", r.Producers, r.Missing, r.Complete)
	}
}

func TestPoolErrorGroups(t *testing.T) {
	info := messages.StepInfo{FleetRate: 10, Rate: 5, Duration: int64(time.Second)}
	var batches []*messages.SampleBatch
	for i, id := range []string{"b", "a", "c"} {
		rec := recorder.New("r1", 1, id, info, &recorder.Options{Seed: 1, Secrets: []string{"hunter2"}})
		for range 2 + i {
			rec.Fail(messages.Login, errors.New(`NO [AUTHENTICATIONFAILED] bad password hunter2 for "`+id+`"`))
		}
		if id != "c" {
			rec.Fail(messages.Select, errors.New("connection reset by peer"))
		}
		batches = append(batches, rec.Cut(0, time.Second, true, messages.Health{}))
	}
	got := poolOf(t, batches).Result().Errors
	want := []messages.ErrorGroup{
		{Phase: "login", Kind: `NO [AUTHENTICATIONFAILED] bad password *** for "…"`, Count: 9, Example: `NO [AUTHENTICATIONFAILED] bad password *** for "a"`, Producers: 3},
		{Phase: "select", Kind: "connection reset by peer", Count: 2, Example: "connection reset by peer", Producers: 2},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Pool.Result() errors =\n%+v\nwant\n%+v", got, want)
	}
}

func TestPoolEmptyAndSparse(t *testing.T) {
	tests := []struct {
		name    string
		batches []*messages.SampleBatch
	}{
		{name: "empty"},
		{name: "batch 0 only", batches: stepBatches("r1", 1, []string{"a"}, 1)[:1]},
		{name: "one latency", batches: func() []*messages.SampleBatch {
			rec := recorder.New("r1", 1, "a", messages.StepInfo{}, nil)
			rec.Record(messages.Fetch, 0, 0)
			return []*messages.SampleBatch{rec.Cut(0, 0, true, messages.Health{})}
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPool("r1", 1, nil)
			for _, b := range tt.batches {
				if _, err := p.Add(b); err != nil {
					t.Fatalf("Pool.Add() error = %v", err)
				}
			}
			r := p.Result()
			if _, err := json.Marshal(r); err != nil {
				t.Errorf("json.Marshal(Pool.Result()) error = %v", err)
			}
			if r.Kind != messages.KindStepResult || r.Run != "r1" || r.Step != 1 {
				t.Errorf("Pool.Result() kind, run, step = %q, %q, %d; want %q, r1, 1", r.Kind, r.Run, r.Step, messages.KindStepResult)
			}
		})
	}
}

func TestPoolSaturation(t *testing.T) {
	batches := stepBatches("r1", 1, []string{"a", "b"}, 1)
	batches[len(batches)-1].Health.Saturated = true
	r := poolOf(t, batches).Result()
	id := batches[len(batches)-1].Producer
	if !r.GeneratorSaturated || !slices.Equal(r.Health.SaturatedProducers, []string{id}) {
		t.Errorf("Pool.Result() generator_saturated = %v, saturated producers %v; want true, [%s]", r.GeneratorSaturated, r.Health.SaturatedProducers, id)
	}
}

// TestPoolStopSeenAfterLag: a producer continued after a SIGSTOP lags in
// one batch (under CPU pressure from others) and counts its SIGCONT only in
// the next, on schedule again: it stalled, not the host (seen in CI).
func TestPoolStopSeenAfterLag(t *testing.T) {
	batches := stepBatches("r1", 1, []string{"a"}, 2)
	lag, cont := batches[1], batches[2]
	lag.Health.Saturated, lag.Health.Pressure, lag.Health.CPULimit = true, 0.14, 1
	cont.Health.Stopped = true
	r := poolOf(t, batches).Result()
	if len(r.PerProducer) != 1 || r.PerProducer[0].LagCause != messages.ReasonGeneratorStalled {
		t.Errorf("Pool.Result() per producer %+v, want lag cause %s", r.PerProducer, messages.ReasonGeneratorStalled)
	}
}
