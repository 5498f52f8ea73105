package health_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/imapload/imapload/health"
	"github.com/imapload/imapload/messages"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape GETs /metrics from a server of m and parses it.
func scrape(t *testing.T, m *health.Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := get(t, start(t, &health.Options{Metrics: m})+health.MetricsPath)
	if code != 200 {
		t.Fatalf("GET /metrics = %d %q, want 200", code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v\n%s", err, body)
	}
	return fams
}

// value returns the value of the series of family name with the labels
// (name=value pairs), and whether there is one.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		if !matches(have, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

func matches(have map[string]string, labels []string) bool {
	if len(have) != len(labels) {
		return false
	}
	for _, kv := range labels {
		k, v, _ := strings.Cut(kv, "=")
		if have[k] != v {
			return false
		}
	}
	return true
}

func batch(run string, step int, seq uint64) *messages.SampleBatch {
	return &messages.SampleBatch{
		Run: run, Step: step, Producer: "p1", Seq: seq,
		Info:      messages.StepInfo{FleetRate: 300, Rate: 100, Producers: 3, Connections: 500},
		Scheduled: 100, Completed: 90,
		Phases: messages.PhaseList{
			{Phase: messages.Fetch, Attempted: 60, Succeeded: 55, Dropped: 4, Errors: messages.ErrorList{
				{Kind: "NO [SERVERBUG] internal error", Count: 3}, {Kind: "timeout", Count: 2}}},
			{Phase: messages.Login, Attempted: 5, Succeeded: 5},
		},
		Health: messages.Health{LagP99: 2500, LagMax: 9000, CPU: 0.25, CPULimit: 1, Sessions: 32,
			Held: 498, HeldMin: 495, HeldDrops: 3},
	}
}

func TestObserveBatch(t *testing.T) {
	m := health.NewMetrics(nil)
	m.ObserveBatch(batch("r1", 2, 1))
	m.ObserveBatch(batch("r1", 2, 2))
	m.ObserveBatch(nil)
	fams := scrape(t, m)
	step := []string{"run=r1", "step=2"}
	fetch := append(step, "phase=fetch")
	tests := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"imapload_producer_batches_total", step, 2},
		{"imapload_producer_scheduled_total", step, 200},
		{"imapload_producer_delivered_total", step, 180},
		{"imapload_producer_offered_rate", step, 100},
		{"imapload_producer_attempted_total", fetch, 120},
		{"imapload_producer_succeeded_total", fetch, 110},
		{"imapload_producer_dropped_total", fetch, 8},
		{"imapload_producer_errors_total", fetch, 10},
		{"imapload_producer_errors_total", append(step, "phase=login"), 0},
		{"imapload_producer_error_kinds", fetch, 2},
		{"imapload_producer_schedule_lag_p99_seconds", step, 0.0025},
		{"imapload_producer_schedule_lag_max_seconds", step, 0.009},
		{"imapload_producer_cpu_cores", step, 0.25},
		{"imapload_producer_sessions", step, 32},
		{"imapload_producer_saturated", step, 0},
		{"imapload_producer_held_connections", step, 498},
		{"imapload_producer_held_connections_min", step, 495},
		{"imapload_producer_held_connections_target", step, 500},
		{"imapload_producer_held_drops_total", step, 6},
		{"imapload_producer_cpu_limit_cores", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name+fmt.Sprint(tt.labels), func(t *testing.T) {
			if got, ok := value(fams, tt.name, tt.labels...); !ok || got != tt.want {
				t.Errorf("%s%v = %v (present %v), want %v", tt.name, tt.labels, got, ok, tt.want)
			}
		})
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if fams[name] == nil {
			t.Errorf("/metrics has no %s: want the runtime and process collectors", name)
		}
	}
}

// TestBoundedSteps checks that only the MaxSteps most recent steps keep
// their series.
func TestBoundedSteps(t *testing.T) {
	m := health.NewMetrics(&health.MetricsOptions{MaxSteps: 2})
	for step := 1; step <= 3; step++ {
		m.ObserveBatch(batch("r1", step, 0))
		m.ObserveResult(result("r1", step, messages.VerdictHeld))
	}
	m.ObserveBatch(batch("r1", 3, 1)) // a known step evicts none
	fams := scrape(t, m)
	for _, name := range []string{"imapload_producer_batches_total", "imapload_step_ratio"} {
		for step, want := range map[int]bool{1: false, 2: true, 3: true} {
			if _, ok := value(fams, name, "run=r1", fmt.Sprintf("step=%d", step)); ok != want {
				t.Errorf("%s{step=%d} present = %v, want %v", name, step, ok, want)
			}
		}
	}
	if _, ok := value(fams, "imapload_producer_attempted_total", "run=r1", "step=1", "phase=fetch"); ok {
		t.Errorf("imapload_producer_attempted_total{step=1,phase=fetch} present after eviction, want deleted")
	}
}
