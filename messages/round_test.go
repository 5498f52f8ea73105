package messages

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
)

func noisyResult() StepResult {
	return StepResult{
		Kind: KindStepResult, Run: "r1", Step: 3, Verdict: VerdictBelow,
		TargetRate: 4000, DeliveredRate: 3598.4321987654, OfferedRate: 3999.99999999, Ratio: 0.89960804969135,
		Phases: map[string]PhaseResult{
			"fetch": {
				Count:       1000,
				Percentiles: Percentiles{P50: 5.625468200517727, P90: 9.87654321, P99: 12.3456789, P999: 40.01234, Max: 51.98765},
				CI:          Intervals{P99: Interval{11.987654, 13.0122301}, P999: Interval{38.1, math.Inf(1)}},
				Sample:      Percentiles{P99: 12.44444},
				Service:     Percentiles{P99: 0.00123456},
				NeverSent:   0.123456789,
			},
		},
		PerProducer:       []ProducerBreakdown{{Producer: "p1", Share: 0.3333333333, P99: 12.3456, Rate: 1333.33333, CPU: 0.123456789}},
		AverageP99Fallacy: map[string]float64{"fetch": -0.312345678},
		Health:            HealthSummary{LagP99Max: 0.98765432, CPUMax: 1.23456789},
	}
}

func TestStepResultRounded(t *testing.T) {
	r := noisyResult()
	got := r.Rounded()
	f := got.Phases["fetch"]
	checks := []struct {
		name      string
		got, want float64
	}{
		{"delivered_rate", got.DeliveredRate, 3598.4},
		{"offered_rate", got.OfferedRate, 4000},
		{"ratio (kept whole)", got.Ratio, r.Ratio},
		{"p50", f.P50, 5.62547},
		{"p99", f.P99, 12.3457},
		{"ci p99 low (down)", f.CI.P99[0], 11.9876},
		{"ci p99 high (up)", f.CI.P99[1], 13.0123},
		{"ci p999 low (down)", f.CI.P999[0], 38.1},
		{"ci p999 high (open)", f.CI.P999[1], math.Inf(1)},
		{"service p99", f.Service.P99, 0.00123456},
		{"never_sent", f.NeverSent, 0.1235},
		{"per-producer share", got.PerProducer[0].Share, 0.3333},
		{"per-producer rate", got.PerProducer[0].Rate, 1333.3},
		{"fallacy", got.AverageP99Fallacy["fetch"], -0.3123},
		{"lag", got.Health.LagP99Max, 0.988},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("Rounded() %s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if r.Phases["fetch"].P99 != 12.3456789 || r.PerProducer[0].Share != 0.3333333333 || r.AverageP99Fallacy["fetch"] != -0.312345678 {
		t.Errorf("Rounded() changed the result it was called on")
	}
	data, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "5.625468") || strings.Contains(string(data), "3598.43") {
		t.Errorf("rounded JSON still carries float noise: %s", data)
	}
}

// TestRoundedKeepsOrder: rounding is monotone, so a percentile inside its
// interval stays inside it, and percentiles stay in order.
func TestRoundedKeepsOrder(t *testing.T) {
	for _, v := range []float64{0.0012345, 1.2345, 9.995, 99.95, 12345.6} {
		lo, hi := v*0.999, v*1.001
		if !(sig(lo, 3) <= sig(v, 3) && sig(v, 3) <= sig(hi, 3)) {
			t.Errorf("sig(%v, 3) = %v outside [%v, %v]", v, sig(v, 3), sig(lo, 3), sig(hi, 3))
		}
	}
}

// TestIntervalRoundedOutward: a published interval holds the computed one
// (its lower end rounded down, its upper end up, whatever the digits), holds
// every value the computed one held once that is rounded too, and a
// point-sized interval stays a point only when it is one exactly.
func TestIntervalRoundedOutward(t *testing.T) {
	for _, iv := range []Interval{
		{0.575123456, 0.575123457}, {0.5751, 0.5752}, {1, 1}, {0.99999999, 1.00000001}, {9.9999995, 10.0000005},
		{123456.789, 123456.789}, {0, 0.00012345678}, {1e-9, 3e-9}, {41.7, math.Inf(1)}, {0.1, 0.3},
	} {
		got := iv.rounded()
		if got[0] > iv[0] || got[1] < iv[1] {
			t.Errorf("Interval%v.rounded() = %v, want it to hold %v", iv, got, iv)
		}
		for _, v := range []float64{iv[0], (iv[0] + iv[1]) / 2, iv[1]} {
			if r := sig(v, LatencyDigits); !math.IsInf(v, 0) && (r < got[0] || r > got[1]) {
				t.Errorf("Interval%v.rounded() = %v: %v published as %v falls outside", iv, got, v, r)
			}
		}
		if d := strconvDigits(got[0]); d > LatencyDigits {
			t.Errorf("Interval%v.rounded() low %v has %d significant digits, want ≤ %d", iv, got[0], d, LatencyDigits)
		}
	}
}

// strconvDigits counts v's significant digits as Go prints it shortest.
func strconvDigits(v float64) int {
	s := strconv.FormatFloat(v, 'e', -1, 64)
	mant, _, _ := strings.Cut(s, "e")
	return len(strings.TrimLeft(strings.Replace(mant, ".", "", 1), "-"))
}

func TestRunReportRounded(t *testing.T) {
	rep := RunReport{Kind: KindRunReport, Run: "r1", Verdict: RunKnee, Steps: []StepResult{noisyResult()},
		Knee: &Knee{Step: 3, Rate: 4000, DeliveredRate: 3598.4321, Ratio: 0.8996}}
	got := rep.Rounded()
	if got.Knee.DeliveredRate != 3598.4 || got.Steps[0].Phases["fetch"].P99 != 12.3457 {
		t.Errorf("RunReport.Rounded() knee delivered %v, step p99 %v; want 3598.4, 12.3457", got.Knee.DeliveredRate, got.Steps[0].Phases["fetch"].P99)
	}
	if rep.Knee.DeliveredRate != 3598.4321 || rep.Steps[0].Phases["fetch"].P99 != 12.3456789 {
		t.Errorf("RunReport.Rounded() changed the report it was called on")
	}
}
