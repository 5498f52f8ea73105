package producer_test

import (
	"fmt"
	"github.com/imapload/imapload/internal/testkit"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/messages"
)

// lagBound is the schedule-lag P99 a producer keeps whatever its target
// does: a failing server costs the dispatcher nothing, so only the host
// keeping the process off the CPU may push the lag beyond it.
const lagBound = 5 * time.Millisecond

// Evidence that the host kept the producer off the CPU during a batch.
const (
	runDelayEvidence  = 0.05 // threads waiting on a run queue, per wall second
	pressureEvidence  = 0.10 // share of time some task of the host waited for a CPU
	throttledEvidence = 0.05 // share of time the cgroup's quota throttled the process
)

// TestFailingTargetKeepsSchedule offers 50/s and then 1,000/s to targets
// that fail in different ways. Every batch must keep schedule lag P99 under
// lagBound, unless that batch itself reports that the host kept the
// producer off the CPU.
func TestFailingTargetKeepsSchedule(t *testing.T) {
	t.Parallel() // its lag judgement is excused by the host's evidence (checkLag)
	plain, err := embedded.StartIMAP(nil)
	if err != nil {
		t.Fatalf("embedded.StartIMAP() error = %v", err)
	}
	t.Cleanup(func() { plain.Close() })
	targets := []struct {
		name string
		addr func(f *fleet) string
		tls  bool
	}{
		{"closed port", func(*fleet) string { return testkit.ClosedAddr(t) }, false},
		{"plaintext to a TLS port", func(f *fleet) string { return f.imap.Addr() }, false},
		{"TLS to a plaintext port", func(*fleet) string { return plain.Addr() }, true},
		{"server that never answers", func(*fleet) string { return silentServer(t) }, false},
	}
	for i, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel() // each its own fleet; a busy host is excused by its evidence (checkLag)
			f := newFleet(t, &embedded.IMAPOptions{TLS: true})
			id := fmt.Sprintf("fail%d", i+1)
			o := f.options(id, 16)
			o.Addr, o.TLS, o.OpTimeout = tg.addr(f), tg.tls, time.Second // a short timeout keeps the step's drain short
			r := f.start(o)
			f.waitLive(1)
			for step, rate := range []int{50, 1000} {
				bs := f.runStep(id, "failing", step+1, fmt.Sprintf(`"rate":%d,"warmup":"500ms","duration":"2s","stagger":"100ms"`, rate))
				for _, b := range bs {
					checkLag(t, fmt.Sprintf("%s at %d/s", tg.name, rate), b)
				}
			}
			if err := r.stop(t); err != nil {
				t.Errorf("%s: Run() error = %v", tg.name, err)
			}
		})
	}
}

// checkLag fails a batch whose schedule lag P99 reached lagBound while the
// host showed no sign of keeping the producer off the CPU, and states what
// the batch reported either way.
func checkLag(t *testing.T, what string, b *messages.SampleBatch) {
	t.Helper()
	h := b.Health
	lag := time.Duration(h.LagP99) * time.Microsecond
	if lag < lagBound {
		return
	}
	evidence := fmt.Sprintf("RunDelay %.3f (evidence above %.2f), Pressure %.3f (above %.2f), Throttled %.3f (above %.2f), "+
		"Stopped %v; CPU %.2f of %.0f cores", h.RunDelay, runDelayEvidence, h.Pressure, pressureEvidence,
		h.Throttled, throttledEvidence, h.Stopped, h.CPU, h.CPULimit)
	if h.RunDelay > runDelayEvidence || h.Pressure > pressureEvidence || h.Throttled > throttledEvidence || h.Stopped {
		t.Logf("%s, batch %d: lag P99 %v ≥ %v, and the host kept the producer off the CPU: %s", what, b.Seq, lag, lagBound, evidence)
		return
	}
	t.Errorf("%s, batch %d: Health.LagP99 = %v, want < %v, and the batch shows no host keeping the producer off the CPU: %s",
		what, b.Seq, lag, lagBound, evidence)
}

// silentServer accepts connections on loopback and never writes a byte;
// the test's cleanup closes it and them.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("net.Listen() error = %v", err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}
