package aggregator

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/imapload/imapload/messages"
)

// throughJSON is r as its readers get it: rounded for publishing, encoded as
// JSON and decoded again.
func throughJSON(t *testing.T, r messages.StepResult) messages.StepResult {
	t.Helper()
	data, err := json.Marshal(r.Rounded())
	if err != nil {
		t.Fatalf("json.Marshal(StepResult.Rounded()) error = %v", err)
	}
	var out messages.StepResult
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("json.Unmarshal(published result) error = %v", err)
	}
	return out
}

// TestPublishedCoverage judges what is published, not what Pool.Result
// computed: logins of three known distributions go through real recorders,
// batches and the pool, four producers of unequal counts, and the result
// through Rounded and its JSON. The published intervals must cover the
// distribution's true percentile as TestCoverage requires of the computed
// ones; each published percentile must be within the sketch's accuracy of
// the exact percentile of the values recorded (DDSketch's rank q·(n−1)),
// inside its own interval, and one whose rank the sample cannot resolve
// (fewer than one value expected above it) must be marked, not read as a
// value below the maximum.
func TestPublishedCoverage(t *testing.T) {
	trials := 300
	if testing.Short() || raceEnabled {
		trials = 60
	}
	for di, d := range covDists {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			truth := d.percentiles()
			for _, n := range []int64{30, 300, 1000, 3000} {
				rng := rand.New(rand.NewPCG(uint64(11+di), uint64(n)))
				var cells [4]covCell
				var worst float64
				for range trials {
					s := binJitter(rng)
					values, batches := loginBatches(rng, d, n, s)
					pr := throughJSON(t, poolOf(t, batches).Result()).Phases["login"]
					tallyAll(&cells, pr.CI, pr.TooFew, values, truth, s)
					worst = max(worst, checkPublished(t, d.name, pr, values))
				}
				t.Logf("%s, n = %d: largest published error %.3f%%", d.name, n, 100*worst)
				if trials >= 300 {
					for i := range quantiles {
						judge(t, "published "+d.name, n, i, cells[i])
					}
				}
			}
		})
	}
}

// TestPublishedCoverageLarge judges published intervals where they are
// narrowest, 10⁴ to 10⁶ values, too many to draw through the pool: each
// interval is computed as TestCoverage computes it (blockTrial), then
// published in a result, rounded and through its JSON.
func TestPublishedCoverageLarge(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("the published intervals' coverage at 10⁴–10⁶ values takes minutes under -race or -short; TestPublishedCoverage covers the path")
	}
	for di, d := range covDists {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			truth := d.percentiles()
			for _, n := range []int64{10_000, 100_000, 1_000_000} {
				rng := rand.New(rand.NewPCG(uint64(21+di), uint64(n)))
				var cells [4]covCell
				for i, q := range quantiles {
					for range coverageTrials(n, q) {
						blockTrial(rng, d, n, q, truth[i], &cells[i], func(iv messages.Interval) messages.Interval {
							r := messages.StepResult{Phases: map[string]messages.PhaseResult{"login": {CI: messages.Intervals{P50: iv}}}}
							return throughJSON(t, r).Phases["login"].CI.P50
						})
					}
				}
				for i := range quantiles {
					judge(t, "published "+d.name, n, i, cells[i])
				}
			}
		})
	}
}

// checkPublished checks one published phase against the values recorded,
// µs, and returns the largest relative error of its resolved percentiles.
func checkPublished(t *testing.T, name string, pr messages.PhaseResult, values []float64) float64 {
	t.Helper()
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	n := len(sorted)
	est := [4]float64{pr.P50, pr.P90, pr.P99, pr.P999}
	ivs := [4]messages.Interval{pr.CI.P50, pr.CI.P90, pr.CI.P99, pr.CI.P999}
	worst := 0.0
	for i, q := range quantiles {
		pct := percentileNames[i]
		if float64(n)*(1-q) < 1 {
			if !slices.Contains(pr.Unresolved, pct) || est[i] < pr.Max {
				t.Fatalf("%s, n = %d: published %s = %v (max %v, unresolved %v), want it unresolved, not below the max", name, n, pct, est[i], pr.Max, pr.Unresolved)
			}
			continue
		}
		if slices.Contains(pr.Unresolved, pct) {
			t.Fatalf("%s, n = %d: published %s unresolved, want a value", name, n, pct)
		}
		exact := sorted[int(q*float64(n-1))] / 1000
		e := math.Abs(est[i]-exact) / exact
		worst = max(worst, e)
		if e > messages.SketchAccuracy {
			t.Fatalf("%s, n = %d: published %s = %v, exact %v: error %.3f%%, want ≤ %.1f%%", name, n, pct, est[i], exact, 100*e, 100*messages.SketchAccuracy)
		}
		if iv := ivs[i]; est[i] < iv[0] || est[i] > iv[1] {
			t.Fatalf("%s, n = %d: published %s = %v outside its own interval %v", name, n, pct, est[i], iv)
		}
	}
	return worst
}
