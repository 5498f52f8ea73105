package observe

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
)

// t0 is the first scrape of the tests' windows.
var t0 = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

// fold parses each text (Prometheus text, or OpenMetrics when it ends in
// "# EOF") as a scrape one second after the last and folds it into a new
// endpoint; a text "FAIL" is a failed scrape. It returns the figures.
func fold(t testing.TB, keep []string, texts ...string) messages.EndpointFigures {
	t.Helper()
	e := newEndpoint("http://127.0.0.1:9100/metrics")
	for i, text := range texts {
		if text == "FAIL" {
			e.fail(fmt.Errorf("%w: HTTP 500 Internal Server Error", ErrScrape))
			continue
		}
		fams, err := parseExposition([]byte(text), "")
		if err != nil {
			t.Fatalf("scrape %d: parseExposition() error = %v", i, err)
		}
		rs, means := readings(fams, keep, nil)
		e.add(t0.Add(time.Duration(i)*time.Second), rs, means)
	}
	return e.figures()
}

// want checks one figure of got: its value, min and max within 1e-9.
func want(t *testing.T, got messages.EndpointFigures, name, kind string, value, lo, hi float64) {
	t.Helper()
	f, ok := got.Figure(name)
	if !ok {
		t.Fatalf("figure %s missing; figures %+v", name, got.Figures)
	}
	if f.Kind != kind || !near(f.Value, value) || !near(f.Min, lo) || !near(f.Max, hi) {
		t.Errorf("%s = %s %v [%v, %v], want %s %v [%v, %v]", name, f.Kind, f.Value, f.Min, f.Max, kind, value, lo, hi)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

func counterText(v float64) string {
	return fmt.Sprintf("# TYPE node_context_switches_total counter\nnode_context_switches_total %v\n", v)
}

// TestCounterRateWithReset: a counter that goes down was reset and counts
// from zero; the rate is the increase over the window's time.
func TestCounterRateWithReset(t *testing.T) {
	got := fold(t, nil, counterText(100), counterText(110), counterText(4), counterText(10))
	// increases 10, 4 (reset: from 0), 6 over 3 s
	want(t, got, "node_context_switches_per_second", messages.FigureRate, 20.0/3, 4, 10)
	if got.Scrapes != 4 || got.Failed != 0 || got.Covered != messages.Duration(3*time.Second) {
		t.Errorf("scrapes %d, failed %d, covered %v; want 4, 0, 3s", got.Scrapes, got.Failed, got.Covered)
	}
}

// TestScrapeMissingMidWindow: a failed scrape is counted with its error,
// and the rate spans the scrapes either side of it.
func TestScrapeMissingMidWindow(t *testing.T) {
	got := fold(t, nil, counterText(0), counterText(10), "FAIL", counterText(30))
	want(t, got, "node_context_switches_per_second", messages.FigureRate, 10, 10, 10)
	if got.Scrapes != 3 || got.Failed != 1 || !strings.Contains(got.Error, "HTTP 500") {
		t.Errorf("scrapes %d, failed %d, error %q; want 3, 1, the HTTP 500", got.Scrapes, got.Failed, got.Error)
	}
}

// TestEveryScrapeFailed: an endpoint that never answered has no figures,
// and says why.
func TestEveryScrapeFailed(t *testing.T) {
	got := fold(t, nil, "FAIL", "FAIL")
	if len(got.Figures) != 0 || got.Scrapes != 0 || got.Failed != 2 || got.Error == "" {
		t.Errorf("figures %v, scrapes %d, failed %d, error %q; want none, 0, 2, an error", got.Figures, got.Scrapes, got.Failed, got.Error)
	}
}

// TestOneScrapeGivesNoRate: a rate needs two scrapes; a gauge has one.
func TestOneScrapeGivesNoRate(t *testing.T) {
	got := fold(t, nil, counterText(5)+"# TYPE node_load1 gauge\nnode_load1 0.5\n")
	if _, ok := got.Figure("node_context_switches_per_second"); ok {
		t.Error("a rate from a single scrape")
	}
	want(t, got, "node_load1", messages.FigureGauge, 0.5, 0.5, 0.5)
}

func nodeText(user0, user1, sys, iowait, idle, disk, zram, rx, lo, avail float64) string {
	var b strings.Builder
	b.WriteString("# TYPE node_cpu_seconds_total counter\n")
	for cpu, user := range []float64{user0, user1} {
		for mode, v := range map[string]float64{"user": user, "system": sys, "iowait": iowait, "idle": idle, "steal": 0, "nice": 0.5 * sys} {
			fmt.Fprintf(&b, "node_cpu_seconds_total{cpu=\"%d\",mode=\"%s\"} %v\n", cpu, mode, v)
		}
	}
	fmt.Fprintf(&b, "# TYPE node_disk_io_time_seconds_total counter\nnode_disk_io_time_seconds_total{device=\"vda\"} %v\nnode_disk_io_time_seconds_total{device=\"zram0\"} %v\n", disk, zram)
	fmt.Fprintf(&b, "# TYPE node_network_receive_bytes_total counter\nnode_network_receive_bytes_total{device=\"eth0\"} %v\nnode_network_receive_bytes_total{device=\"lo\"} %v\n", rx, lo)
	fmt.Fprintf(&b, "# TYPE node_memory_MemAvailable_bytes gauge\nnode_memory_MemAvailable_bytes %v\n# TYPE node_memory_MemTotal_bytes gauge\nnode_memory_MemTotal_bytes 8e9\n", avail)
	return b.String()
}

// TestNodeExporterFigures: CPU in cores (busy over every CPU and mode but
// idle, iowait and steal), the busiest real disk, network without lo.
func TestNodeExporterFigures(t *testing.T) {
	got := fold(t, nil,
		nodeText(10, 20, 5, 1, 100, 3, 0, 1000, 0, 4e9),
		nodeText(10.9, 20.5, 5.2, 1.1, 100.2, 3.12, 0.9, 3000, 9e6, 2e9),
		nodeText(11.8, 21.0, 5.4, 1.2, 100.4, 3.24, 1.8, 5000, 18e6, 3e9))
	// per second: user 0.9 + 0.5, system 2 × 0.2, nice 2 × 0.1
	want(t, got, "node_cpu_busy_cores", messages.FigureRate, 2.0, 2.0, 2.0)
	want(t, got, "node_cpu_user_cores", messages.FigureRate, 1.4, 1.4, 1.4)
	want(t, got, "node_cpu_system_cores", messages.FigureRate, 0.4, 0.4, 0.4)
	want(t, got, "node_cpu_iowait_cores", messages.FigureRate, 0.2, 0.2, 0.2)
	want(t, got, "node_cpu_cores", messages.FigureGauge, 2, 2, 2)
	want(t, got, "node_disk_busy_ratio", messages.FigureRate, 0.12, 0.12, 0.12) // zram0 left out
	want(t, got, "node_network_receive_bytes_per_second", messages.FigureRate, 2000, 2000, 2000)
	want(t, got, "node_memory_available_bytes", messages.FigureGauge, 3e9, 2e9, 4e9)
	want(t, got, "node_memory_total_bytes", messages.FigureGauge, 8e9, 8e9, 8e9)
}

// TestNodeExporterCapture parses a real node_exporter 1.5 page (Debian's
// prometheus-node-exporter) twice: every figure of the host is there.
func TestNodeExporterCapture(t *testing.T) {
	text, err := os.ReadFile("testdata/node_exporter.txt")
	if err != nil {
		t.Fatal(err)
	}
	got := fold(t, nil, string(text), string(text))
	for _, name := range []string{"node_cpu_busy_cores", "node_cpu_cores", "node_load1", "node_memory_available_bytes",
		"node_disk_busy_ratio", "node_disk_read_bytes_per_second", "node_network_transmit_bytes_per_second", "node_context_switches_per_second"} {
		if _, ok := got.Figure(name); !ok {
			t.Errorf("figure %s missing from the capture's; got %v", name, got.Figures)
		}
	}
	if f, _ := got.Figure("node_cpu_busy_cores"); f.Value != 0 {
		t.Errorf("node_cpu_busy_cores = %v from the same page twice, want 0", f.Value)
	}
}

// dovecotText is Dovecot 2.3's OpenMetrics page with logins and their
// summed duration at the given values.
func dovecotText(logins, seconds float64) string {
	return fmt.Sprintf(`# HELP process_start_time_seconds Timestamp of service start
# TYPE process_start_time_seconds gauge
process_start_time_seconds 1796661438
# HELP dovecot_build Dovecot build information
# TYPE dovecot_build info
dovecot_build_info{version="2.3.19.1",revision="9b53102964"} 1
# HELP dovecot_logins Total number of all events of this kind
# TYPE dovecot_logins counter
dovecot_logins_total %v
# HELP dovecot_logins_duration_seconds Total duration of all events of this kind
# TYPE dovecot_logins_duration_seconds counter
dovecot_logins_duration_seconds_total %v
# EOF
`, logins, seconds)
}

// TestDovecotOpenMetrics: Dovecot's metrics, mapped by name, from its
// OpenMetrics page (info type, counters named without _total, # EOF).
func TestDovecotOpenMetrics(t *testing.T) {
	got := fold(t, nil, dovecotText(100, 0.5), dovecotText(300, 1.5), dovecotText(400, 1.7))
	want(t, got, "dovecot_logins_per_second", messages.FigureRate, 150, 100, 200)
	want(t, got, "dovecot_logins_duration_seconds", messages.FigureMean, 1.2/300, 0.002, 0.005)
	if _, ok := got.Figure("dovecot_logins_duration_seconds_total"); ok {
		t.Error("the summed durations are published beside their mean")
	}
	text, err := os.ReadFile("testdata/dovecot.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseExposition(text, "application/openmetrics-text; version=0.0.1; charset=utf-8"); err != nil {
		t.Errorf("parseExposition(Dovecot 2.3.19's page) error = %v", err)
	}
}

// TestOpenMetricsSamples: exemplars and timestamps (seconds) are dropped,
// label values with braces and quotes survive.
func TestOpenMetricsSamples(t *testing.T) {
	text := "# TYPE a counter\n# UNIT a seconds\n" +
		`a_total{path="/x{1}",q="say \"hi\" }"} 5 1700000000.123 # {trace_id="abc"} 1.0 1700000000` + "\n" +
		"a_created{path=\"/x{1}\"} 1700000000\n# EOF\n"
	fams, err := parseExposition([]byte(text), "application/openmetrics-text; version=1.0.0")
	if err != nil {
		t.Fatalf("parseExposition() error = %v", err)
	}
	f := fams["a_total"]
	if f == nil || len(f.GetMetric()) != 1 || f.GetMetric()[0].GetCounter().GetValue() != 5 || label(f.GetMetric()[0], "q") != `say "hi" }` {
		t.Errorf("a_total = %v", f)
	}
}

// TestMalformedExposition: text that parses as neither format is an error
// of that scrape, wrapping ErrExposition.
func TestMalformedExposition(t *testing.T) {
	for _, text := range []string{"node_load1{cpu=\"0\" 1\n", "# TYPE x counter\nx abc\n", "\x00\xff{{{", "<html>500</html>"} {
		if _, err := parseExposition([]byte(text), ""); !errors.Is(err, ErrExposition) {
			t.Errorf("parseExposition(%q) error = %v, want ErrExposition", text, err)
		}
	}
}

// TestKeptMetrics: metrics named with --metric keep their name, summed
// over their series.
func TestKeptMetrics(t *testing.T) {
	page := func(req, temp, sum, count float64) string {
		return fmt.Sprintf("# TYPE http_requests_total counter\nhttp_requests_total{code=\"200\"} %v\nhttp_requests_total{code=\"500\"} %v\n"+
			"# TYPE temp gauge\ntemp %v\n# TYPE lat_seconds histogram\nlat_seconds_bucket{le=\"+Inf\"} %v\nlat_seconds_sum %v\nlat_seconds_count %v\n",
			req, req/10, temp, count, sum, count)
	}
	got := fold(t, []string{"http_requests_total", "temp", "lat_seconds", "absent"}, page(100, 20, 1, 10), page(200, 30, 3, 20))
	want(t, got, "http_requests_total", messages.FigureRate, 110, 110, 110)
	want(t, got, "temp", messages.FigureGauge, 25, 20, 30)
	want(t, got, "lat_seconds", messages.FigureMean, 0.2, 0.2, 0.2)
	want(t, got, "lat_seconds_count", messages.FigureRate, 10, 10, 10)
	if _, ok := got.Figure("absent"); ok {
		t.Error("a figure for a metric no endpoint has")
	}
}

// TestSeriesCap: an endpoint with more series than the cap keeps the cap's
// worth and says how many it left out.
func TestSeriesCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("# TYPE node_disk_read_bytes_total counter\n")
	for i := range maxSeries + 10 {
		fmt.Fprintf(&b, "node_disk_read_bytes_total{device=\"sd%d\"} 1\n", i)
	}
	got := fold(t, nil, b.String(), b.String())
	if got.Omitted < 10 {
		t.Errorf("omitted %d, want at least 10", got.Omitted)
	}
	if _, ok := got.Figure("node_disk_read_bytes_per_second"); !ok {
		t.Error("the figure of the kept series is missing")
	}
}

func TestNextScrape(t *testing.T) {
	end := t0.Add(10 * time.Second)
	for _, tc := range []struct {
		now, want time.Duration
	}{{0, time.Second}, {10 * time.Millisecond, time.Second}, {2500 * time.Millisecond, 3 * time.Second}, {9900 * time.Millisecond, 10 * time.Second}} {
		if got := nextScrape(t0, end, t0.Add(tc.now), time.Second); !got.Equal(t0.Add(tc.want)) {
			t.Errorf("nextScrape(now = start + %v) = start + %v, want start + %v", tc.now, got.Sub(t0), tc.want)
		}
	}
	if got := nextScrape(t0, t0.Add(1500*time.Millisecond), t0.Add(1100*time.Millisecond), time.Second); !got.Equal(t0.Add(1500 * time.Millisecond)) {
		t.Errorf("nextScrape() past the end = start + %v, want the end", got.Sub(t0))
	}
}
