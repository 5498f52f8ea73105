package observe_test

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/observe"
	"github.com/imapload/imapload/producer"
)

// startNodeExporter runs the node_exporter binary on a free port of
// 127.0.0.1 until the test ends, and returns its metrics URL once it answers.
func startNodeExporter(t *testing.T, bin string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "--web.listen-address="+addr, "--log.level=warn")
	var logs testkit.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("node_exporter's log:\n%s", logs.String())
		}
	})
	url := "http://" + addr + "/metrics"
	testkit.WaitFor(t, 30*time.Second, "node_exporter answering on "+addr, func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return url
}

// procBusy is the host's busy CPU time from /proc/stat, in seconds: every
// CPU's user, nice, system, irq and softirq (node_cpu_busy_cores' modes;
// guest time is inside user, steal is left out, as idle and iowait are).
func procBusy(t *testing.T) float64 {
	t.Helper()
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal …
	if len(f) < 8 || f[0] != "cpu" {
		t.Fatalf("/proc/stat begins %q", line)
	}
	busy := 0.0
	for _, i := range []int{1, 2, 3, 6, 7} {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			t.Fatal(err)
		}
		busy += v
	}
	return busy / 100 // USER_HZ, as node_exporter counts
}

// procWindows measures /proc/stat over each step's window, as the observer
// counts it: the warm-up after the step command arrived, then its duration.
type procWindows struct {
	t    *testing.T
	mu   sync.Mutex
	busy map[int]float64 // step → busy cores over its window
	wg   sync.WaitGroup
}

func watchProc(t *testing.T, nc *nats.Conn) *procWindows {
	t.Helper()
	p := &procWindows{t: t, busy: map[int]float64{}}
	sub, err := nc.Subscribe(messages.StepSubject, func(m *nats.Msg) {
		cmd, err := messages.ParseStepCommand(m.Data)
		if err != nil {
			return
		}
		start := time.Now().Add(cmd.WarmupOrDefault())
		p.wg.Go(func() { p.measure(cmd.Step, start, start.Add(cmd.Duration.D())) })
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Unsubscribe(); p.wg.Wait() })
	return p
}

func (p *procWindows) measure(step int, start, end time.Time) {
	time.Sleep(time.Until(start))
	b0, t0 := procBusy(p.t), time.Now()
	time.Sleep(time.Until(end))
	b1, t1 := procBusy(p.t), time.Now()
	p.mu.Lock()
	p.busy[step] = (b1 - b0) / t1.Sub(t0).Seconds()
	p.mu.Unlock()
}

func (p *procWindows) of(step int) (float64, bool) {
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.busy[step]
	return v, ok
}

// kneeFinding is the finding that names what limited the knee, with its figure.
var kneeFinding = regexp.MustCompile(`^at the knee \(step (\d+), [^)]*\) (.*[0-9]%.*): (CPU-bound|disk-bound|memory-bound|the disk|the bottleneck is between them.*|they do not name the bottleneck.*)$`)

// TestObserveDovecotRamp ramps Dovecot (deploy/dovecot, its OpenMetrics
// listener on) with a real node_exporter started here: every step carries
// both endpoints' figures, the host's busy CPU agrees with /proc/stat over
// the same window (within 0.3 cores: the machine is shared, the windows
// differ by a scrape's time), and the knee's finding names the resource
// with its figure.
func TestObserveDovecotRamp(t *testing.T) {
	testkit.Require(t, testkit.Long)
	d := testkit.DovecotFromEnv(t, 20)
	bin := testkit.Require(t, testkit.NodeExporter)
	dovecotMetrics := os.Getenv("IMAPLOAD_DOVECOT_METRICS_ADDR")
	if dovecotMetrics == "" {
		t.Fatal("IMAPLOAD_DOVECOT_METRICS_ADDR is not set: start Dovecot with deploy/dovecot/start.sh (without METRICS_PORT=off) and export what it prints")
	}
	node := startNodeExporter(t, bin)
	p := newPipeline(t)
	proc := watchProc(t, p.nc)
	accts, err := producer.TemplateAccounts(d.Prefix+"%d", d.Users, d.Password)
	if err != nil {
		t.Fatal(err)
	}
	p.startAggregator()
	p.startObserver(&observe.Options{ID: "mailhost", Endpoints: []string{node, "http://" + dovecotMetrics + "/metrics"}, Timeout: 5 * time.Second})
	// The producer shares the host's 2 cores with a CPU-bound Dovecot (and,
	// on a shared machine, with others): a schedule lag of up to 100 ms
	// still offers the step's rate, and counts as keeping up here.
	p.startProducer(&producer.Options{ID: "dc1", Addr: d.Addr, Accounts: accts, Sessions: 64, OpTimeout: 5 * time.Second,
		FlushInterval: 500 * time.Millisecond, Seed: 42, SaturationLag: 100 * time.Millisecond})
	warmup := messages.Duration(time.Second)
	r := p.ramp("dovecot-observe", []float64{300, 600, 1200, 2400, 4800},
		messages.StepCommand{Script: "login select fetch logout", Duration: messages.Duration(5 * time.Second), Warmup: &warmup}, nil)
	t.Logf("report:\n%s", table(t, r))
	for _, s := range r.Steps {
		checkStepFigures(t, &s, proc)
	}
	checkKnee(t, r, proc)
}

// checkStepFigures: both endpoints' figures are in step s, and the host's
// busy CPU is /proc/stat's of the same window.
func checkStepFigures(t *testing.T, s *messages.StepResult, proc *procWindows) {
	t.Helper()
	if s.Server == nil || len(s.Server.Endpoints) != 2 {
		t.Fatalf("step %d: server figures %+v, want node_exporter's and Dovecot's", s.Step, s.Server)
	}
	nodeEP, dovecotEP := s.Server.Endpoints[0], s.Server.Endpoints[1]
	busy, ok := nodeEP.Figure("node_cpu_busy_cores")
	if !ok || nodeEP.Scrapes < 4 {
		t.Fatalf("step %d: node_exporter %+v, want node_cpu_busy_cores from 4 scrapes or more", s.Step, nodeEP)
	}
	for _, name := range []string{"dovecot_logins_per_second", "dovecot_logins_duration_seconds", "dovecot_imap_commands_per_second", "dovecot_auth_requests_per_second"} {
		if f, ok := dovecotEP.Figure(name); !ok || !(f.Value > 0) {
			t.Errorf("step %d: Dovecot's %s = %+v, want > 0; endpoint %+v", s.Step, name, f, dovecotEP)
		}
	}
	want, ok := proc.of(s.Step)
	if !ok {
		t.Fatalf("step %d: no /proc/stat window", s.Step)
	}
	t.Logf("step %d: node_cpu_busy_cores %.2f, /proc/stat %.2f over the same window", s.Step, busy.Value, want)
	if math.Abs(busy.Value-want) > 0.3 {
		t.Errorf("step %d: node_cpu_busy_cores %.2f, /proc/stat says %.2f over the same window", s.Step, busy.Value, want)
	}
}

// checkKnee: the knee's finding names a resource with its figure, and a
// CPU-bound one agrees with /proc/stat. A run with no knee (every step
// above the last held one inconclusive on a busy host) says why.
func checkKnee(t *testing.T, r messages.RunReport, proc *procWindows) {
	t.Helper()
	if r.Knee == nil {
		t.Logf("no knee on this host (verdict %s): the knee's finding is not judged", r.Verdict)
		for _, s := range r.Steps {
			if s.Verdict == messages.VerdictInconclusive && len(s.Reasons) == 0 {
				t.Errorf("step %d inconclusive without a reason", s.Step)
			}
		}
		if r.Verdict == messages.RunNoKnee || r.Verdict == messages.RunInconclusive {
			return
		}
		t.Fatalf("run verdict %s without a knee", r.Verdict)
	}
	var found []string
	for _, f := range r.Findings {
		if m := kneeFinding.FindStringSubmatch(f); m != nil && m[1] == strconv.Itoa(r.Knee.Step) {
			found = m
		}
	}
	if found == nil {
		t.Fatalf("no finding names what limited the knee (step %d):\n%s", r.Knee.Step, strings.Join(r.Findings, "\n"))
	}
	if found[3] == "CPU-bound" {
		busy, _ := proc.of(r.Knee.Step)
		if busy < 0.8*2*0.9 {
			t.Errorf("the knee is CPU-bound (%s) but /proc/stat says %.2f cores busy over its window", found[2], busy)
		}
	}
	fmt.Fprintf(os.Stderr, "TestObserveDovecotRamp: knee finding judged: %s\n", found[0])
}
