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

func TestServedQuantile(t *testing.T) {
	tests := []struct {
		name      string
		d         demand
		q         float64
		want      float64
		wantOK    bool
		neverSent float64
	}{
		{name: "nothing dropped", d: demand{served: 69}, q: 0.99, want: 0.99, wantOK: true},
		{name: "nothing at all", d: demand{}, q: 0.5, want: 0.5, wantOK: true},
		{name: "30% dropped, p50", d: demand{served: 700, dropped: 300}, q: 0.5, want: 0.5 / 0.7, wantOK: true, neverSent: 0.3},
		{name: "30% dropped, p90", d: demand{served: 700, dropped: 300}, q: 0.9, neverSent: 0.3},
		{name: "on the last served", d: demand{served: 900, dropped: 100}, q: 0.9, want: 1, wantOK: true, neverSent: 0.1},
		{name: "70% dropped, p50", d: demand{served: 300, dropped: 700}, q: 0.5, neverSent: 0.7},
		{name: "all dropped", d: demand{dropped: 5}, q: 0.5, neverSent: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.d.servedQuantile(tt.q)
			if ok != tt.wantOK || math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("demand%+v.servedQuantile(%v) = %v, %v; want %v, %v", tt.d, tt.q, got, ok, tt.want, tt.wantOK)
			}
			if ns := tt.d.neverSent(); math.Abs(ns-tt.neverSent) > 1e-12 {
				t.Errorf("demand%+v.neverSent() = %v, want %v", tt.d, ns, tt.neverSent)
			}
		})
	}
}

// overloaded records a fetch phase of n scheduled commands of which a share
// was never sent, over three producers, and a few failures, which count in
// neither. It returns the batches and the served latencies, µs.
func overloaded(n int, dropShare float64) ([]*messages.SampleBatch, []float64) {
	rng := rand.New(rand.NewPCG(21, 22))
	info := messages.StepInfo{FleetRate: 1000, Rate: 333, Producers: 3, Duration: int64(time.Second)}
	var batches []*messages.SampleBatch
	var served []float64
	for i := range 3 {
		rec := recorder.New("r1", 1, "p"+pad2(i), info, &recorder.Options{Reservoir: messages.MaxReservoir, Seed: uint64(i + 1)})
		for j := range n / 3 {
			if float64(j) < dropShare*float64(n/3) {
				rec.Drop(messages.Fetch)
				continue
			}
			us := math.Round(20_000 * math.Exp(0.3*rng.NormFloat64()))
			rec.Record(messages.Fetch, time.Duration(us)*time.Microsecond, time.Millisecond)
			rec.Scheduled(true)
			served = append(served, us)
		}
		rec.Fail(messages.Fetch, errors.New("NO [SERVERBUG] busy"))
		rec.Scheduled(false)
		batches = append(batches, rec.Cut(0, time.Second, true, messages.Health{}))
	}
	return batches, served
}

// TestNeverSent: the commands never sent stay in the response-time
// percentiles as unbounded ones; the percentiles whose rank falls among
// them read as the largest served response time and are listed in Above.
func TestNeverSent(t *testing.T) {
	tests := []struct {
		name      string
		dropShare float64
		above     []string
	}{
		{name: "70% dropped", dropShare: 0.7, above: []string{"p50", "p90", "p99", "p999"}},
		{name: "30% dropped", dropShare: 0.3, above: []string{"p90", "p99", "p999"}},
		{name: "none dropped", dropShare: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			batches, served := overloaded(3000, tt.dropShare)
			r := poolOf(t, batches).Result()
			pr := r.Phases["fetch"]
			if _, err := json.Marshal(r); err != nil {
				t.Fatalf("json.Marshal(Pool.Result()) error = %v", err)
			}
			if pr.Count != uint64(len(served)) || math.Abs(pr.NeverSent-tt.dropShare) > 1e-9 || !slices.Equal(pr.Above, tt.above) {
				t.Fatalf("Pool.Result() fetch count %d, never sent %v, above %v; want %d, %v, %v", pr.Count, pr.NeverSent, pr.Above, len(served), tt.dropShare, tt.above)
			}
			checkNeverSent(t, pr, served)
			if len(pr.Disagree) != 0 || len(pr.TooFew) != 0 {
				t.Errorf("Pool.Result() disagree %v, too few %v; want none", pr.Disagree, pr.TooFew)
			}
			if relErr(pr.Service.P999, 1) > messages.SketchAccuracy || pr.Attempted != pr.Count+3 {
				t.Errorf("Pool.Result() service p999 %v ms, attempted %d; want the sent commands' 1 ms, %d", pr.Service.P999, pr.Attempted, pr.Count+3)
			}
		})
	}
}

// checkNeverSent checks each percentile of pr: the largest served response
// time, with an interval open above, when its rank falls among the commands
// never sent; otherwise the served latencies' order statistic at the
// rescaled quantile, by the sketch and by the sample.
func checkNeverSent(t *testing.T, pr messages.PhaseResult, served []float64) {
	t.Helper()
	n := float64(pr.Count + pr.Dropped)
	served = slices.Sorted(slices.Values(served))
	sk := [4]float64{pr.P50, pr.P90, pr.P99, pr.P999}
	sample := [4]float64{pr.Sample.P50, pr.Sample.P90, pr.Sample.P99, pr.Sample.P999}
	ivs := [4]messages.Interval{pr.CI.P50, pr.CI.P90, pr.CI.P99, pr.CI.P999}
	for i, q := range quantiles {
		if slices.Contains(pr.Above, percentileNames[i]) {
			if sk[i] != pr.Max || sample[i] != pr.Sample.Max || ivs[i][0] != pr.Max || !ivs[i].Open() {
				t.Errorf("Pool.Result() %s = %v ms (sample %v, interval %v), want the largest, %v ms (sample %v), interval [max, open)",
					percentileNames[i], sk[i], sample[i], ivs[i], pr.Max, pr.Sample.Max)
			}
			continue
		}
		qs := q * n / float64(pr.Count)
		want := served[int(qs*float64(len(served)-1))] / 1000 // DDSketch's order statistic at qs
		if relErr(sk[i], want) > messages.SketchAccuracy || sample[i] != want {
			t.Errorf("Pool.Result() %s = %v ms (sample %v), want %v ms, the served quantile %.4f", percentileNames[i], sk[i], sample[i], want, qs)
		}
	}
}
