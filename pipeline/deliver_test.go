package pipeline_test

import (
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/ramp"
	"github.com/imapload/imapload/reporter"
	"github.com/imapload/imapload/verdict"
)

// Delivery bottleneck: the embedded server delivers at most 1 worker /
// 200 ms = 5 messages/s, while the step offers 20/s beside a command rate
// of 20/s that the server serves without limit.
const (
	bottleneckDeliverRate = 20
	bottleneckWorkers     = 1
	bottleneckService     = 200 * time.Millisecond
)

// TestRunDeliveryBottleneck: when deliveries are what the server cannot
// keep up with, the step is below on deliveries alone (its command rate
// held), the run held no step and its reason names the deliveries, and the
// exit code is the one of that verdict (ExitNoneHeld); with the same
// offer and no delivery limit, the step holds.
func TestRunDeliveryBottleneck(t *testing.T) {
	for _, tc := range []struct {
		name      string
		workers   int
		service   time.Duration
		wantBelow bool
	}{
		{"capacity under the offer", bottleneckWorkers, bottleneckService, true},
		{"no delivery limit", 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := embedded.StartIMAP(&embedded.IMAPOptions{LMTPAddr: "127.0.0.1:0",
				DeliverWorkers: tc.workers, DeliverServiceTime: tc.service})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			o := shortRun(t, srv, 1)
			o.Producer.LMTPAddr = srv.LMTPAddr()
			if tc.wantBelow {
				// Few delivery connections: the deliveries still in flight at
				// the window's end, accepted after it, stay few beside what
				// the window offered.
				o.Producer.DeliverConns, o.Producer.DeliverQueue = 4, 4
			}
			o.Ramp.Template.DeliverRate = bottleneckDeliverRate
			o.Ramp.Template.Duration = messages.Duration(2 * time.Second)
			o.StepTimeout = 15 * time.Second // past the drain (one OpTimeout), on a busy host too
			// Min = the rate: a first step below does not step down (the
			// deliveries' rate would not come down with it).
			o.Ramp.Plan = ramp.Plan{Rates: []float64{20}, Min: 20}
			results, err := runCtx(t, o)
			if err != nil || len(results) != 1 {
				t.Fatalf("Run() = %d results, error %v; want 1, nil", len(results), err)
			}
			checkBottleneck(t, results, tc.wantBelow, srv.DeliverCapacity())
		})
	}
}

// checkBottleneck judges the one step and the run built from it.
func checkBottleneck(t *testing.T, results []messages.StepResult, wantBelow bool, capacity float64) {
	t.Helper()
	s := results[0]
	d := s.Deliveries
	if d == nil || d.TargetRate != bottleneckDeliverRate {
		t.Fatalf("step deliveries = %+v, want a target of %d/s", d, bottleneckDeliverRate)
	}
	t.Logf("deliveries: %.1f/s of %.0f/s (capacity %.0f/s), %d accepted, %d dropped; commands %.1f/s of %.0f/s; below %q",
		d.DeliveredRate, d.TargetRate, capacity, d.Accepted, d.Dropped, s.DeliveredRate, s.TargetRate, s.Below)
	if s.Ratio < 0.9 {
		t.Errorf("command ratio = %.2f: the commands should hold, only deliveries are limited", s.Ratio)
	}
	report := reporter.Build("t", results, 0, time.Now())
	if !wantBelow {
		if s.Verdict != messages.VerdictHeld || s.Below != "" || report.Verdict != messages.RunNoKnee {
			t.Errorf("step verdict %q (reasons %+v), below %q, run %q: want held, nothing below, no knee", s.Verdict, s.Reasons, s.Below, report.Verdict)
		}
		return
	}
	if d.DeliveredRate > capacity*1.5 {
		t.Errorf("delivered %.1f/s through a capacity of %.0f/s", d.DeliveredRate, capacity)
	}
	if s.Verdict != messages.VerdictBelow || !strings.HasPrefix(s.Below, "deliveries: ") {
		t.Errorf("step verdict %q (reasons %+v), below %q: want below on deliveries alone", s.Verdict, s.Reasons, s.Below)
	}
	if report.Verdict != messages.RunNoneHeld || len(report.Reasons) == 0 || !strings.Contains(report.Reasons[0].Detail, "deliveries") {
		t.Errorf("run verdict %q, reasons %+v: want none held, naming the deliveries", report.Verdict, report.Reasons)
	}
	if got := verdict.ExitCode(report); got != verdict.ExitNoneHeld {
		t.Errorf("ExitCode() = %d, want %d (none held)", got, verdict.ExitNoneHeld)
	}
}
