package producer_test

import (
	"math"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
)

// TestBatchesReportHostHealth sends the test process a SIGCONT (harmless: it
// is running) in the middle of a step. The batches cut before it do not
// report the process stopped, a later one does; every batch reports
// GOMAXPROCS as the CPU limit and finite, non-negative shares of time the
// host kept the producer off the CPU.
func TestBatchesReportHostHealth(t *testing.T) {
	f := newFleet(t, nil)
	f.start(f.options("cont", 2))
	f.waitLive(1)
	col := f.collect("cont", 1)
	f.request(`{"run":"cont","step":1,"rate":20,"warmup":"200ms","duration":"2s","stagger":"100ms"}`, 1)
	testkit.WaitFor(t, 10*time.Second, "batch 1", func() bool {
		got, _ := col.snapshot()
		return len(got["cont"]) >= 2
	})
	before, _ := col.snapshot()
	if err := syscall.Kill(os.Getpid(), syscall.SIGCONT); err != nil {
		t.Fatalf("kill(self, SIGCONT) error = %v", err)
	}
	bs := col.finals(t, 1, 15*time.Second)["cont"]
	n := len(before["cont"])
	for _, b := range bs[:n] {
		if b.Health.Stopped {
			t.Errorf("batch %d, cut before the SIGCONT: Health.Stopped = true, want false", b.Seq)
		}
	}
	stopped := false
	for _, b := range bs[n:] {
		stopped = stopped || b.Health.Stopped
	}
	if !stopped {
		t.Errorf("no batch after the SIGCONT reports Health.Stopped, want one (%d batches after it)", len(bs)-n)
	}
	for _, b := range bs {
		checkHostHealth(t, b)
	}
}

func checkHostHealth(t *testing.T, b *messages.SampleBatch) {
	t.Helper()
	h := b.Health
	if want := float64(runtime.GOMAXPROCS(0)); h.CPULimit != want {
		t.Errorf("batch %d Health.CPULimit = %v, want GOMAXPROCS %v", b.Seq, h.CPULimit, want)
	}
	for name, v := range map[string]float64{"RunDelay": h.RunDelay, "Pressure": h.Pressure, "Throttled": h.Throttled} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			t.Errorf("batch %d Health.%s = %v, want finite and ≥ 0", b.Seq, name, v)
		}
	}
	if h.Pressure > 1 || h.Throttled > 1 {
		t.Errorf("batch %d Health.Pressure, Throttled = %v, %v; want shares of time, at most 1", b.Seq, h.Pressure, h.Throttled)
	}
}
