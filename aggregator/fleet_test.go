package aggregator

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// fleet is a synthetic step: batches cut by real recorders, and every raw
// latency recorded, to compare the pool with the exact answer.
type fleet struct {
	batches []*messages.SampleBatch
	raw     map[messages.Phase][]float64            // µs, every producer
	perProd map[string]map[messages.Phase][]float64 // µs
}

// fleetSpec describes a synthetic fleet.
type fleetSpec struct {
	producers int
	batches   int // cuts per producer
	reservoir int
	minCount  int // latencies per producer and phase, before the 10× spread
	phases    []messages.Phase
	slowFirst bool // producer p00 completes 5× fewer requests than the median one, 10× slower
	seed      uint64
}

var testInfo = messages.StepInfo{FleetRate: 1000, Rate: 20, Producers: 50, Warmup: 0, Duration: int64(10 * time.Second)}

// makeFleet records the fleet. Counts spread 10× across producers; slower
// producers (those with fewer requests) are slower, as in a real load test;
// login mixes cache hits (≈0.2 ms) and bcrypt misses (≈60 ms) with a hit
// rate varying per producer; other phases are lognormal with a Pareto tail.
func makeFleet(t testing.TB, s fleetSpec) *fleet {
	t.Helper()
	rng := rand.New(rand.NewPCG(s.seed, 42))
	f := &fleet{raw: map[messages.Phase][]float64{}, perProd: map[string]map[messages.Phase][]float64{}}
	for i := range s.producers {
		id := "p" + pad2(i)
		spread := 1 + 9*rng.Float64() // 10× spread of counts
		if i == 0 && s.slowFirst {
			spread = 5.5 / 5 // the median producer's count is 5.5
		}
		scale := 1 / math.Sqrt(spread) // fewer requests, slower ones
		if i == 0 && s.slowFirst {
			scale = 10
		}
		rec := recorder.New("r1", 1, id, testInfo, &recorder.Options{Reservoir: s.reservoir, Seed: s.seed*1000 + uint64(i) + 1})
		f.perProd[id] = map[messages.Phase][]float64{}
		hit := 0.5 + 0.45*rng.Float64()
		for cut := range s.batches {
			for _, ph := range s.phases {
				n := int(float64(s.minCount) * spread / float64(s.batches))
				for range n {
					us := math.Max(1, math.Round(latency(rng, ph, hit, scale)))
					d := time.Duration(us) * time.Microsecond
					rec.Record(ph, d, d/2)
					f.raw[ph] = append(f.raw[ph], us)
					f.perProd[id][ph] = append(f.perProd[id][ph], us)
				}
				for range n * btoi(ph.Scheduled()) {
					rec.Scheduled(true)
				}
			}
			final := cut == s.batches-1
			f.batches = append(f.batches, rec.Cut(time.Duration(cut)*time.Second, time.Duration(cut+1)*time.Second, final, messages.Health{CPU: 0.1, Sessions: 4}))
		}
	}
	return f
}

// latency draws one latency in µs; scale slows the producer's commands down
// (its login costs what the server's password check costs).
func latency(rng *rand.Rand, ph messages.Phase, hit, scale float64) float64 {
	if ph == messages.Login {
		if rng.Float64() < hit {
			return 200 * math.Exp(0.25*rng.NormFloat64())
		}
		return 60000 * math.Exp(0.15*rng.NormFloat64())
	}
	v := 2000 * math.Exp(0.5*rng.NormFloat64())
	if rng.Float64() < 0.05 { // Pareto tail, α = 1.5, from 5 ms
		v = 5000 / math.Pow(1-rng.Float64(), 1/1.5)
	}
	return v * scale
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func pad2(i int) string {
	if i < 10 {
		return "0" + strconv.Itoa(i)
	}
	return strconv.Itoa(i)
}

// exact is the q-quantile of values (inverse of the empirical CDF).
func exact(values []float64, q float64) float64 {
	s := slices.Clone(values)
	slices.Sort(s)
	return exactSorted(s, q)
}

func exactSorted(s []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(i, 0)]
}

func relErr(got, want float64) float64 { return math.Abs(got-want) / want }

func poolOf(t testing.TB, batches []*messages.SampleBatch) *Pool {
	t.Helper()
	p := NewPool(batches[0].Run, batches[0].Step, nil)
	for _, b := range batches {
		if _, err := p.Add(b); err != nil {
			t.Fatalf("Pool.Add(%s #%d) error = %v", b.Producer, b.Seq, err)
		}
	}
	return p
}

func TestSyntheticFleet(t *testing.T) {
	f := makeFleet(t, fleetSpec{producers: 60, batches: 4, reservoir: 512, minCount: 400, seed: 7, slowFirst: true,
		phases: []messages.Phase{messages.Login, messages.Select, messages.Fetch}})
	r := poolOf(t, f.batches).Result()
	for _, ph := range []messages.Phase{messages.Login, messages.Select, messages.Fetch} {
		pr := r.Phases[ph.String()]
		for _, c := range []struct {
			name string
			got  float64
			q    float64
		}{{"p99", pr.P99, 0.99}, {"p999", pr.P999, 0.999}} {
			want := exact(f.raw[ph], c.q) / 1000
			t.Logf("%s %s: pooled %.4f ms, exact %.4f ms (%+.3f%%)", ph, c.name, c.got, want, 100*(c.got-want)/want)
			if e := relErr(c.got, want); e > 0.01 {
				t.Errorf("Pool.Result() %s %s = %.4f ms, want %.4f ms (exact) within 1%%, off by %.2f%%", ph, c.name, c.got, want, 100*e)
			}
		}
		if pr.Count != uint64(len(f.raw[ph])) {
			t.Errorf("Pool.Result() %s count = %d, want %d", ph, pr.Count, len(f.raw[ph]))
		}
	}
	checkFallacy(t, f, r, messages.Fetch)
	checkLoginBimodal(t, r)
	if r.Phases["fetch"].Bimodal != nil {
		t.Errorf("Pool.Result() fetch bimodal = %+v, want nil (lognormal body, Pareto tail)", r.Phases["fetch"].Bimodal)
	}
	slow := r.PerProducer[0]
	if slow.Producer != "p00" || !slow.Deviant {
		t.Errorf("Pool.Result() per-producer[0] = %+v, want p00 flagged deviant", slow)
	}
}

// checkFallacy shows, on the same data, that the average of per-producer P99s
// is far from the exact pooled P99 while the pool is not, and that the
// result quantifies it.
func checkFallacy(t *testing.T, f *fleet, r messages.StepResult, ph messages.Phase) {
	t.Helper()
	truth := exact(f.raw[ph], 0.99)
	sum := 0.0
	for _, byPhase := range f.perProd {
		sum += exact(byPhase[ph], 0.99)
	}
	avg := sum / float64(len(f.perProd))
	if e := relErr(avg, truth); e < 0.05 {
		t.Errorf("average of per-producer %s P99s = %.3f ms, exact pooled %.3f ms: only %.1f%% apart, want > 5%% (fleet not skewed enough)", ph, avg/1000, truth/1000, 100*e)
	}
	// The result's figure uses the sketches' per-producer P99s, whose rank
	// convention differs by one order statistic on small producers: same
	// sign and order of magnitude is what to expect.
	got, ok := r.AverageP99Fallacy[ph.String()]
	if want := (avg - truth) / truth; !ok || got*want <= 0 || math.Abs(got) < 0.05 {
		t.Errorf("Pool.Result() average_p99_fallacy[%s] = %.3f (present %v), want beyond ±0.05 with the sign of %.3f", ph, got, ok, want)
	}
	t.Logf("%s: exact P99 %.3f ms, pooled %.3f ms, average of per-producer P99s %.3f ms (%+.1f%%)",
		ph, truth/1000, r.Phases[ph.String()].P99, avg/1000, 100*(avg-truth)/truth)
}

func checkLoginBimodal(t *testing.T, r messages.StepResult) {
	t.Helper()
	b := r.Phases["login"].Bimodal
	if b == nil {
		t.Fatal("Pool.Result() login bimodal = nil, want two modes (cache hits, bcrypt misses)")
	}
	if b.LowMode < 0.1 || b.LowMode > 0.4 || b.HighMode < 40 || b.HighMode > 90 {
		t.Errorf("Pool.Result() login modes = %.3f ms / %.3f ms, want ≈ 0.2 ms / ≈ 60 ms", b.LowMode, b.HighMode)
	}
	if b.LowShare < 0.5 || b.LowShare > 0.95 || math.Abs(b.LowShare+b.HighShare-1) > 1e-9 {
		t.Errorf("Pool.Result() login shares = %.3f/%.3f, want a hit share in [0.5, 0.95] summing to 1", b.LowShare, b.HighShare)
	}
}

// TestIntervalCoverage checks over many fleets that the 95% intervals, which
// are about the server's distribution (coverage of it is tested in
// coverage_test.go), hold the exact percentile of all raw values at least 95%
// of the time, and that the sketch, which saw the same latencies, is rarely
// flagged as disagreeing.
func TestIntervalCoverage(t *testing.T) {
	seeds := 200
	if raceEnabled {
		seeds = 10
	}
	var covered [3]int
	disagree := 0
	names := [3]string{"p50", "p90", "p99"}
	for seed := range uint64(seeds) {
		f := makeFleet(t, fleetSpec{producers: 50, batches: 1, reservoir: 32, minCount: 60, seed: seed + 1,
			phases: []messages.Phase{messages.Fetch}})
		pr := poolOf(t, f.batches).Result().Phases["fetch"]
		disagree += len(pr.Disagree)
		raw := slices.Clone(f.raw[messages.Fetch])
		slices.Sort(raw)
		for i, c := range []struct {
			q  float64
			iv messages.Interval
		}{{0.5, pr.CI.P50}, {0.9, pr.CI.P90}, {0.99, pr.CI.P99}} {
			truth := exactSorted(raw, c.q) / 1000
			if c.iv[0] <= truth && truth <= c.iv[1] {
				covered[i]++
			}
		}
	}
	for i, n := range covered {
		rate := float64(n) / float64(seeds)
		t.Logf("%s: 95%% interval covered the exact value in %d of %d fleets (%.1f%%)", names[i], n, seeds, 100*rate)
		if !raceEnabled && rate < 0.95 {
			t.Errorf("%s interval coverage of the exact value = %.1f%%, want ≥ 95%%", names[i], 100*rate)
		}
	}
	rate := float64(disagree) / float64(4*seeds)
	t.Logf("disagree: %d of %d percentiles (%.1f%%)", disagree, 4*seeds, 100*rate)
	if !raceEnabled && rate > 0.05 {
		t.Errorf("Pool.Result() disagree rate = %.1f%% of percentiles, want ≤ 5%% (sketch and sample saw the same latencies)", 100*rate)
	}
}
