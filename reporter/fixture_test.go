package reporter

import (
	"math"
	"time"

	"github.com/imapload/imapload/messages"
)

// fixedNow stamps every report built in tests.
var fixedNow = time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)

// round3 keeps three decimals, so that the golden files show short numbers.
func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// phaseResult makes a deterministic phase: percentiles scaled from p50 and
// p99, intervals a few percent wide.
func phaseResult(count, failed uint64, p50, p99 float64) messages.PhaseResult {
	pct := func(k float64) messages.Percentiles {
		return messages.Percentiles{P50: round3(p50 * k), P90: round3(2 * p50 * k), P99: round3(p99 * k), P999: round3(1.8 * p99 * k), Max: round3(3 * p99 * k)}
	}
	iv := func(v float64) messages.Interval { return messages.Interval{round3(0.95 * v), round3(1.06 * v)} }
	pr := pct(1)
	return messages.PhaseResult{
		Count: count, Attempted: count + failed, Succeeded: count,
		Percentiles: pr,
		CI:          messages.Intervals{P50: iv(pr.P50), P90: iv(pr.P90), P99: iv(pr.P99), P999: iv(pr.P999)},
		Sample:      pct(1.01),
		Service:     pct(0.8),
	}
}

// stepResult makes a complete step result of three producers.
func stepResult(step int, target, delivered float64) messages.StepResult {
	d := 30 * time.Second
	return messages.StepResult{
		Kind: messages.KindStepResult, Run: "golden", Step: step,
		TargetRate: target, DeliveredRate: delivered, Ratio: round3(delivered / target),
		Duration: messages.Duration(d), Complete: true,
		Producers: []string{"p1", "p2", "p3"},
		Scheduled: uint64(target * d.Seconds()), Attempted: uint64(target * d.Seconds()), Succeeded: uint64(delivered * d.Seconds()),
		Errors: []messages.ErrorGroup{},
		PerProducer: []messages.ProducerBreakdown{
			{Producer: "p1", Count: uint64(delivered * 10), Share: 0.334, P99: 4},
			{Producer: "p2", Count: uint64(delivered * 10), Share: 0.333, P99: 4.2},
			{Producer: "p3", Count: uint64(delivered * 10), Share: 0.333, P99: 3.9},
		},
		Health:    messages.HealthSummary{LagP99Max: 0.4, CPUMax: 0.31, SessionsMax: 300},
		Batches:   30,
		Generated: fixedNow.Add(-time.Duration(6-step) * time.Minute),
	}
}

// goldenSteps is a five-step ramp: step 3's generator was saturated (its low
// ratio is not a knee), step 4 is the knee (with errors, a deviant producer
// and the averaging fallacy), step 5 lost a producer; login is bimodal
// throughout. They are given out of order, as a map would.
func goldenSteps() []messages.StepResult {
	steps := make([]messages.StepResult, 0, 5)
	for i, r := range []struct{ target, delivered, latency float64 }{
		{500, 499.2, 1}, {1000, 996.5, 1.3}, {1500, 1245, 2.1}, {2000, 1560, 9.5}, {2500, 1500, 30},
	} {
		s := stepResult(i+1, r.target, r.delivered)
		n := uint64(r.delivered * 30)
		s.Phases = map[string]messages.PhaseResult{
			"dial":  phaseResult(n/10, 0, 0.35*r.latency, 1.2*r.latency),
			"login": phaseResult(n/10, 0, 0.21, 58),
			"fetch": phaseResult(n*6/10, 0, r.latency, 8*r.latency),
			"store": phaseResult(n*3/10, 0, 0.8*r.latency, 6*r.latency),
		}
		login := s.Phases["login"]
		login.Bimodal = &messages.Bimodality{LowMode: 0.21, HighMode: 58, LowShare: 0.62, HighShare: 0.38, Separation: 4.1}
		s.Phases["login"] = login
		steps = append(steps, s)
	}
	saturate(&steps[2])
	knee(&steps[3])
	missing(&steps[4])
	return []messages.StepResult{steps[3], steps[0], steps[4], steps[2], steps[1]}
}

func saturate(s *messages.StepResult) {
	s.GeneratorSaturated = true
	s.Health = messages.HealthSummary{LagP99Max: 85.5, CPUMax: 0.97, SessionsMax: 450, SaturatedProducers: []string{"p2"}}
	s.PerProducer[1].Saturated = true
}

func knee(s *messages.StepResult) {
	s.Errors = []messages.ErrorGroup{
		{Phase: "fetch", Kind: "NO [SERVERBUG] internal error", Count: 120, Example: "A12 NO [SERVERBUG] Internal error occurred", Producers: 3},
		{Phase: "login", Kind: "NO [UNAVAILABLE] too many connections", Count: 30, Producers: 2},
		{Phase: "dial", Kind: "dial: connection refused", Count: 4, Producers: 1},
		{Phase: "store", Kind: "BAD <timeout>", Count: 2, Producers: 1},
	}
	setFailed(s, map[string]uint64{"fetch": 120, "login": 30, "dial": 4, "store": 2})
	s.Dropped = 340
	s.PerProducer[2] = messages.ProducerBreakdown{Producer: "p3", Count: 9000, Share: 0.19, P99: 412, ErrorShare: 0.6,
		Deviant: true, Reason: "its P99 is 5.1x the pool's"}
	s.AverageP99Fallacy = map[string]float64{"fetch": -0.35, "login": -0.04}
}

func missing(s *messages.StepResult) {
	s.Complete = false
	s.Producers = []string{"p1", "p2"}
	s.Missing = []string{"p3"}
	s.PerProducer = s.PerProducer[:2]
	s.Errors = []messages.ErrorGroup{{Phase: "fetch", Kind: "NO [SERVERBUG] internal error", Count: 800, Producers: 2}}
	setFailed(s, map[string]uint64{"fetch": 800})
	fetch := s.Phases["fetch"]
	fetch.Disagree = []string{"p99.9"}
	s.Phases["fetch"] = fetch
}

func setFailed(s *messages.StepResult, failed map[string]uint64) {
	for name, n := range failed {
		p := s.Phases[name]
		p.Attempted += n
		s.Phases[name] = p
	}
}
