package reporter

import (
	"bytes"
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
)

// withServer gives s the figures of one node_exporter-like endpoint: each
// name with its value (rates and gauges alike; Min = Max = Value).
func withServer(s messages.StepResult, figs map[string]float64) messages.StepResult {
	e := messages.EndpointFigures{URL: "http://127.0.0.1:9100/metrics", Scrapes: 31}
	for name, v := range figs {
		e.Figures = append(e.Figures, messages.Figure{Name: name, Kind: messages.FigureRate, Value: v, Min: v, Max: v})
	}
	s.Server = &messages.ServerResult{Observers: []string{"mail1"}, Endpoints: []messages.EndpointFigures{e}}
	return s
}

func cpu(busy float64) map[string]float64 {
	return map[string]float64{"node_cpu_busy_cores": busy, "node_cpu_cores": 2, "node_disk_busy_ratio": 0.01,
		"node_memory_available_bytes": 6e9, "node_memory_total_bytes": 8e9}
}

// ramp3 is a ramp of three steps, the last the knee, with the figures given.
func ramp3(figs ...map[string]float64) []messages.StepResult {
	var out []messages.StepResult
	for i, rate := range []float64{100, 200, 400} {
		delivered := rate
		if i == 2 {
			delivered = 250
		}
		out = append(out, withServer(stepResult(i+1, rate, delivered), figs[i]))
	}
	return out
}

func TestServerFindings(t *testing.T) {
	auth := func(login, imap float64) map[string]float64 {
		f := cpu(0.6)
		f["dovecot_logins_duration_seconds"], f["dovecot_imap_commands_duration_seconds"] = login, imap
		return f
	}
	disk := cpu(0.7)
	disk["node_cpu_iowait_cores"], disk["node_disk_busy_ratio"] = 0.8, 0.6
	workers := func(busy, queue float64) map[string]float64 {
		return map[string]float64{"imapload_imapserver_workers": 2, "imapload_imapserver_workers_busy": busy, "imapload_imapserver_queue_length": queue}
	}
	tests := []struct {
		name  string
		steps []messages.StepResult
		want  []string
	}{
		{"CPU-bound", ramp3(cpu(0.8), cpu(1.9), cpu(1.97)), []string{
			"at the knee (step 3, 400/s offered, 250/s delivered) CPU 1.97 of 2 cores busy (98%) from step 2 on; memory 25% used (6.0 GB available at the least), disk 1% busy: CPU-bound",
			"headroom (the busiest server resource of each held step): 100/s held at 40% CPU, 200/s held at 95% CPU"}},
		{"the disk", ramp3(cpu(0.5), cpu(0.6), disk), []string{"CPU 0.70 of 2 cores busy (35%) while iowait was 0.80 cores (disk 60% busy): the disk"}},
		{"authentication", ramp3(auth(0.0002, 0.001), auth(0.0005, 0.001), auth(0.008, 0.0011)), []string{
			"logins duration seconds rose 40× (0.200 → 8.00 ms) from step 1 to the knee (step 3) while imap command duration did not (1.1×): authentication"}},
		{"between them", ramp3(cpu(0.2), cpu(0.3), cpu(0.3)), []string{
			"the server was not busy (memory 25% used (6.0 GB available at the least), CPU 0.30 of 2 cores busy (15%), disk 1% busy): the bottleneck is between them (the network, a proxy, the generator); the producers' own health: CPU up to 0.31 cores, schedule lag P99 up to 0.400 ms"}},
		{"not saturated", ramp3(cpu(0.5), cpu(1.0), cpu(1.4)), []string{"no resource the figures cover was saturated (CPU 1.40 of 2 cores busy (70%)", "they do not name the bottleneck"}},
		{"workers", ramp3(workers(0.9, 0), workers(1.5, 0.2), workers(2, 37)), []string{
			"the server's 2 workers were busy 100% of the window (37 commands queued on average): bound by its workers",
			"100/s held at 45% workers busy, 200/s held at 75% workers busy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(findingsOf(tt.steps), "\n")
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("findings lack %q; got:\n%s", w, got)
				}
			}
			for _, bad := range []string{"-bound", "by its workers", "the disk", "authentication", "between them", "do not name"} {
				if !strings.Contains(strings.Join(tt.want, "\n"), bad) && strings.Contains(got, bad) {
					t.Errorf("findings claim %q without the figure for it:\n%s", bad, got)
				}
			}
		})
	}
}

// TestObserverFindings: missing figures and failed endpoints are named.
func TestObserverFindings(t *testing.T) {
	steps := ramp3(cpu(0.2), cpu(0.3), cpu(0.3))
	steps[1].Server.Missing = []string{"mail2"}
	steps[2].Server.Endpoints[0].Failed, steps[2].Server.Endpoints[0].Error = 3, "observe: scrape failed: HTTP 500 Internal Server Error"
	got := strings.Join(findingsOf(steps), "\n")
	for _, w := range []string{"observer mail2 announced step 2 but its server figures did not arrive in time",
		"endpoint http://127.0.0.1:9100/metrics failed scrapes at step 3 (last: observe: scrape failed: HTTP 500"} {
		if !strings.Contains(got, w) {
			t.Errorf("findings lack %q; got:\n%s", w, got)
		}
	}
}

// TestNoServerNoFindings: a ramp without figures says nothing of the server.
func TestNoServerNoFindings(t *testing.T) {
	steps := ramp3(nil, nil, nil)
	for i := range steps {
		steps[i].Server = nil
	}
	for _, f := range findingsOf(steps) {
		if strings.Contains(f, "server resource") || strings.Contains(f, "headroom") || strings.Contains(f, "between them") {
			t.Errorf("a finding of the server without its figures: %s", f)
		}
	}
	r := Build("golden", steps, DefaultThreshold, fixedNow)
	var b bytes.Buffer
	if err := RenderTable(&b, r); err != nil || strings.Contains(b.String(), "server:") {
		t.Errorf("RenderTable() = %v, and a server line without figures:\n%s", err, b.String())
	}
}

// TestServerInReport: the table's line, the page's plot and server.svg.
func TestServerInReport(t *testing.T) {
	r := Build("golden", ramp3(cpu(0.8), cpu(1.9), cpu(1.97)), DefaultThreshold, fixedNow)
	var table, page bytes.Buffer
	if err := RenderTable(&table, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "server: CPU 1.97 of 2 cores busy (98%); memory 25% used") {
		t.Errorf("table has no server line:\n%s", table.String())
	}
	if err := RenderHTML(&page, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "The server&#39;s resources against offered rate") || !strings.Contains(page.String(), "server: CPU 1.97") {
		t.Error("report.html has no server plot or server line")
	}
	paths, err := WritePlots(t.TempDir(), r)
	if err != nil {
		t.Fatal(err)
	}
	if last := paths[len(paths)-1]; !strings.HasSuffix(last, "server.svg") {
		t.Errorf("WritePlots() wrote %v, want server.png and server.svg last", paths)
	}
}
