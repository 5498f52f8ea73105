package producer_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
)

// The end-to-end test against a real Dovecot (see deploy/dovecot/README.md):
//
//	set -a; eval "$(deploy/dovecot/start.sh /tmp/dovecot 12143)"; set +a
//	go test ./producer -run Dovecot -v
//	deploy/dovecot/stop.sh /tmp/dovecot
//
// Without IMAPLOAD_DOVECOT_ADDR it is skipped, unless IMAPLOAD_E2E=1 says the
// end-to-end suite must run, in which case it fails.

// Rates and lengths of the Dovecot step: well under the capacity of a
// private Dovecot on a 2-core machine (~360 sessions/s, thousands of
// commands/s), short enough for a test suite.
const (
	dovecotRate     = 150 // commands/s, fleet-wide, shared by the three good producers
	dovecotWarmup   = time.Second
	dovecotDuration = 4 * time.Second
	dovecotSessions = 8 // per producer: 24 Dovecot imap processes, well under the 100 accounts × 2
	wrongPassword   = "e2e-Wrong-Passw0rd"
)

// TestDovecotEndToEnd runs three producers against a real Dovecot at 150
// commands/s with the default workload mix, and a fourth whose account has a
// wrong password. The three deliver ≥ 99% of their offered rate and every
// phase has samples; the fourth's failed LOGINs show up as their own error
// kind (NO [AUTHENTICATIONFAILED]); no password appears in any batch or log
// line.
func TestDovecotEndToEnd(t *testing.T) {
	dc := dovecotFromEnv(t)
	f := newDovecotFleet(t)
	logs := &testkit.Buffer{}
	good := []string{"dc1", "dc2", "dc3"}
	for _, id := range good {
		f.start(dc.options(t, id, dc.Password, logs))
	}
	tries, tolerable := 2, 250*time.Millisecond
	if raceEnabled {
		tries, tolerable = 1, time.Hour
	}
	got := unstalled(t, tries, tolerable, func(i int) (map[string][]*messages.SampleBatch, error) {
		// A fresh wrong-password producer, hence a fresh source address,
		// for each attempt: see wrongPasswordOptions.
		bad := f.start(dc.wrongPasswordOptions(t, logs))
		defer bad.stop(t)
		f.waitLive(4)
		return f.dovecotStep(t, i+1)
	})
	checkBatches(t, got)
	checkDelivered(t, got, good)
	checkEveryPhase(t, got, good)
	checkWrongPassword(t, got["dcbad"])
	checkNoPassword(t, got, logs, dc.Password)
}

// dovecotStep runs step i of the run "dovecot" on the four producers and
// returns their batches. The fleet rate is divided by the three good
// producers (Producers: 3), so each good one offers 50 commands/s whatever
// the fourth does; the fourth offers the same and fails to log in.
func (f *fleet) dovecotStep(t *testing.T, i int) (map[string][]*messages.SampleBatch, error) {
	col := f.collect("dovecot", i)
	cmd := fmt.Sprintf(`{"run":"dovecot","step":%d,"rate":%d,"producers":3,"warmup":"%v","duration":"%v","stagger":"500ms"}`,
		i, dovecotRate, dovecotWarmup, dovecotDuration)
	replies, err := f.ask(cmd, 4)
	if err != nil {
		return nil, err
	}
	for _, r := range replies {
		if !r.Accepted || r.Rate != dovecotRate/3 || r.Producers != 3 {
			t.Errorf("step reply = %+v, want accepted at %d/s of 3 producers", r, dovecotRate/3)
		}
	}
	// The step lasts 5 s; the wrong-password session may still be waiting
	// for its LOGIN's answer (≤ 6 s, see wrongPasswordOptions) after it.
	return col.await(4, 20*time.Second)
}

// checkDelivered: the good producers completed ≥ 99% of the offered rate.
func checkDelivered(t *testing.T, got map[string][]*messages.SampleBatch, good []string) {
	t.Helper()
	var scheduled, completed, dropped uint64
	for _, id := range good {
		s, c, d := sums(got[id])
		t.Logf("%s: %d batches, scheduled %d, completed %d, dropped %d", id, len(got[id]), s, c, d)
		scheduled, completed, dropped = scheduled+s, completed+c, dropped+d
	}
	want := uint64(dovecotRate * dovecotDuration.Seconds())
	if scheduled < want-3 || scheduled > want+3 {
		t.Errorf("good producers scheduled %d commands in the %v window, want %d ± 3", scheduled, dovecotDuration, want)
	}
	delivered := float64(completed) / dovecotDuration.Seconds()
	switch {
	case raceEnabled:
		t.Logf("race detector on: delivered %.1f commands/s, not checked", delivered)
	case delivered < 0.99*dovecotRate:
		t.Errorf("good producers delivered %.1f commands/s (%d of %d, %d dropped), want ≥ 99%% of %d",
			delivered, completed, scheduled, dropped, dovecotRate)
	}
}

// checkEveryPhase: every phase of the default mix, and dial and login, has
// successful samples across the good producers, with as many response and
// service latencies as successes, and no error of any kind. Phase hold is
// left out: these steps hold no connections (see TestDovecotHoldsConnections),
// and so are deliver and inbox: they deliver nothing.
func checkEveryPhase(t *testing.T, got map[string][]*messages.SampleBatch, good []string) {
	t.Helper()
	for _, p := range messages.Phases() {
		if p == messages.Hold || p == messages.Deliver || p == messages.Inbox {
			continue // no held connections nor deliveries here (TestDovecotHoldsConnections, TestRunDovecotDeliveries)
		}
		if _, inMix := messages.DefaultMix()[p.String()]; p.Scheduled() && !inMix {
			continue // a client command, run when a step's mix names it (TestDovecotClientPhases)
		}
		var ok, resp, svc uint64
		for _, id := range good {
			for _, b := range got[id] {
				ps := b.PhaseStats(p)
				if ps == nil {
					continue
				}
				ok, resp, svc = ok+ps.Succeeded, resp+ps.Response.Count, svc+ps.Service.Count
				for _, e := range ps.Errors {
					t.Errorf("%s phase %v: %d errors of kind %q (e.g. %q), want none", id, p, e.Count, e.Kind, e.Example)
				}
			}
		}
		t.Logf("phase %-6v: %4d succeeded", p, ok)
		if ok == 0 || resp != ok || svc != ok {
			t.Errorf("phase %v: %d succeeded, %d response and %d service latencies; want > 0, one of each per success",
				p, ok, resp, svc)
		}
	}
}

// checkWrongPassword: the wrong-password producer's LOGINs failed, each with
// the AUTHENTICATIONFAILED kind, and it completed no command.
func checkWrongPassword(t *testing.T, bs []*messages.SampleBatch) {
	t.Helper()
	var failed uint64
	for _, b := range bs {
		ps := b.PhaseStats(messages.Login)
		if ps == nil {
			continue
		}
		if ps.Succeeded != 0 {
			t.Errorf("dcbad batch %d: %d LOGINs succeeded with a wrong password, want 0", b.Seq, ps.Succeeded)
		}
		for _, e := range ps.Errors {
			if !strings.Contains(e.Kind, "AUTHENTICATIONFAILED") {
				t.Errorf("dcbad login error kind %q (e.g. %q), want one containing AUTHENTICATIONFAILED", e.Kind, e.Example)
			}
			failed += e.Count
		}
	}
	// A LOGIN that began in the warm-up is no phase login figure, and one
	// still waiting on Dovecot's auth-failure delay when the window ends is
	// cut: the set-up counts of the final batch (from the step's start to
	// the window's end) hold those that failed.
	var setupFailed uint64
	for _, b := range bs {
		for _, st := range b.Setup {
			if st.Stage != messages.SetupLogin || st.Failed == 0 {
				continue
			}
			if !strings.Contains(st.Error, "AUTHENTICATIONFAILED") {
				t.Errorf("dcbad set-up stage login failed with %q, want a kind containing AUTHENTICATIONFAILED", st.Error)
			}
			setupFailed += st.Failed
		}
	}
	if failed+setupFailed == 0 {
		t.Errorf("dcbad: no failed LOGIN recorded, want the wrong password to show up in phase login or its set-up stage")
	}
	if _, completed, _ := sums(bs); completed != 0 {
		t.Errorf("dcbad completed %d commands, want 0 without a login", completed)
	}
	t.Logf("dcbad: %d LOGINs failed with AUTHENTICATIONFAILED in the window, %d in the step's set-up", failed, setupFailed)
}

// checkNoPassword: neither password appears in any batch (as published:
// re-encoded from the decoded batch, which keeps every string) nor in any
// log line of any producer.
func checkNoPassword(t *testing.T, got map[string][]*messages.SampleBatch, logs *testkit.Buffer, password string) {
	t.Helper()
	secrets := [][]byte{[]byte(password), []byte(wrongPassword)}
	for id, bs := range got {
		for _, b := range bs {
			data, err := messages.EncodeBatch(b)
			if err != nil {
				t.Fatalf("EncodeBatch(%s batch %d) error = %v", id, b.Seq, err)
			}
			for _, s := range secrets {
				if bytes.Contains(data, s) {
					t.Errorf("%s batch %d holds a password", id, b.Seq)
				}
			}
		}
	}
	for _, s := range secrets {
		if strings.Contains(logs.String(), string(s)) {
			t.Errorf("producer log holds a password:\n%s", logs.String())
		}
	}
}
