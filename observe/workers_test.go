package observe_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/observe"
	"github.com/imapload/imapload/producer"
)

// TestWorkersBusyFinding runs the whole pipeline in this process against
// the embedded IMAP server with its metrics endpoint: 2 workers of 20 ms
// serve 100 commands/s, so a ramp of 30/s then 200/s holds, then falls
// below, and the report says why: "the server's 2 workers were busy 100%
// of the window", with the headroom of the step that held.
func TestWorkersBusyFinding(t *testing.T) {
	imap, err := embedded.StartIMAP(&embedded.IMAPOptions{Users: 20, Workers: 2, ServiceTime: 20 * time.Millisecond, MetricsAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { imap.Close() })
	p := newPipeline(t)
	accts, err := producer.TemplateAccounts("user%d", 20, imap.Password())
	if err != nil {
		t.Fatal(err)
	}
	p.startAggregator()
	p.startObserver(&observe.Options{ID: "imap1", Endpoints: []string{imap.MetricsURL()}, Interval: 250 * time.Millisecond})
	// A schedule lag of up to 100 ms still offers these rates: on a shared
	// host under -race the producer's default (20 ms) voids steps that
	// measured the server well.
	p.startProducer(&producer.Options{ID: "p1", Addr: imap.Addr(), Accounts: accts, Sessions: 16, OpTimeout: 5 * time.Second,
		FlushInterval: 500 * time.Millisecond, Seed: 42, SaturationLag: 100 * time.Millisecond})
	warmup := messages.Duration(time.Second)
	r := p.ramp("workers", []float64{30, 200}, messages.StepCommand{Duration: messages.Duration(3 * time.Second), Warmup: &warmup}, nil)
	text := table(t, r)
	t.Logf("report:\n%s", text)
	for _, s := range r.Steps {
		if s.Server == nil || len(s.Server.Observers) != 1 || len(s.Server.Endpoints) != 1 {
			t.Fatalf("step %d: server figures %+v, want imap1's endpoint", s.Step, s.Server)
		}
	}
	if len(r.Steps) == 2 {
		busy, _ := r.Steps[1].Server.Endpoints[0].Figure("imapload_imapserver_workers_busy")
		if !(busy.Value >= 1.8) {
			t.Errorf("step 2 at twice the capacity: workers busy %v of 2, want at least 1.8", busy.Value)
		}
	}
	last := r.Steps[len(r.Steps)-1]
	switch findings := strings.Join(r.Findings, "\n"); {
	case r.Knee != nil && r.Knee.Step == 2:
		if !busyFinding.MatchString(findings) || !strings.Contains(findings, "30.0/s held at ") {
			t.Errorf("findings lack %q and the headroom of step 1:\n%s", busyFinding, findings)
		}
	case last.Verdict == messages.VerdictInconclusive && len(last.Reasons) > 0:
		// A host too busy to offer the step says so, and why (the ramp
		// stops there); the step's server line still shows the workers.
		t.Logf("step %d inconclusive on this host (%s): the knee's finding is not judged", last.Step, last.Reasons[0].Code)
		if !strings.Contains(text, "server: the server's 2 workers were busy") {
			t.Errorf("table lacks the server line:\n%s", text)
		}
	default:
		t.Errorf("knee %+v, step %d %s: want the knee at step 2 (twice the capacity)", r.Knee, last.Step, last.Verdict)
	}
}

// busyFinding is the knee's finding when the workers were saturated.
var busyFinding = regexp.MustCompile(`at the knee \(step 2, 200/s offered, [0-9.]+/s delivered\) the server's 2 workers were busy (9[0-9]|100)% of the window \([0-9.]+ commands queued on average\): bound by its workers`)
