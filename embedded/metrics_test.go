package embedded_test

import (
	"bytes"
	"net/http"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/internal/testkit"
)

// scrapeIMAP reads the server's metrics endpoint.
func scrapeIMAP(t *testing.T, s *embedded.IMAP) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(s.MetricsURL())
	if err != nil {
		t.Fatalf("GET %s: %v", s.MetricsURL(), err)
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	if _, err := body.ReadFrom(resp.Body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", s.MetricsURL(), resp.Status, err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(&body)
	if err != nil {
		t.Fatalf("the metrics do not parse: %v", err)
	}
	return fams
}

func metric(fams map[string]*dto.MetricFamily, name string) float64 {
	f := fams[name]
	if f == nil || len(f.GetMetric()) != 1 {
		return -1
	}
	m := f.GetMetric()[0]
	return m.GetGauge().GetValue() + m.GetCounter().GetValue()
}

// TestIMAPMetrics: with more clients than workers, the endpoint shows the
// pool busy, commands queued and served, and the time slots were held.
func TestIMAPMetrics(t *testing.T) {
	s := startIMAP(t, &embedded.IMAPOptions{Users: 6, Workers: 2, ServiceTime: 20 * time.Millisecond, MetricsAddr: "127.0.0.1:0"})
	if s.MetricsURL() == "" {
		t.Fatal("MetricsURL() is empty with MetricsAddr set")
	}
	if got := metric(scrapeIMAP(t, s), "imapload_imapserver_workers"); got != 2 {
		t.Fatalf("imapload_imapserver_workers = %v, want 2", got)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 1; i <= 6; i++ {
		c := login(t, s, s.UserName(i))
		wg.Go(func() {
			for n := 0; n < 500; n++ { // bounded: at most 10 s of service on 2 workers
				select {
				case <-stop:
					return
				default:
				}
				if c.Noop().Wait() != nil {
					return
				}
			}
		})
	}
	var fams map[string]*dto.MetricFamily
	testkit.WaitFor(t, 30*time.Second, "commands queued behind 2 busy workers", func() bool {
		fams = scrapeIMAP(t, s)
		return metric(fams, "imapload_imapserver_queue_length") > 0 && metric(fams, "imapload_imapserver_workers_busy") == 2
	})
	close(stop)
	wg.Wait()
	if metric(fams, "imapload_imapserver_commands_total") < 6 || metric(fams, "imapload_imapserver_logins_total") != 6 ||
		metric(fams, "imapload_imapserver_connections") != 6 || !(metric(fams, "imapload_imapserver_worker_busy_seconds_total") > 0) {
		t.Errorf("commands %v, logins %v, connections %v, busy seconds %v; want ≥ 6, 6, 6, > 0",
			metric(fams, "imapload_imapserver_commands_total"), metric(fams, "imapload_imapserver_logins_total"),
			metric(fams, "imapload_imapserver_connections"), metric(fams, "imapload_imapserver_worker_busy_seconds_total"))
	}
}

// TestIMAPNoMetrics: without MetricsAddr nothing is served.
func TestIMAPNoMetrics(t *testing.T) {
	if s := startIMAP(t, &embedded.IMAPOptions{Users: 1}); s.MetricsURL() != "" {
		t.Errorf("MetricsURL() = %q without MetricsAddr, want \"\"", s.MetricsURL())
	}
}
