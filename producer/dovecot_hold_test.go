package producer_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/producer"
)

// Shape of the held-connection step against Dovecot: 2,000 IDLE connections
// set up over 8 s (250 set-ups/s, under Dovecot's ~360 logins/s here) while
// one producer's 8 sessions offer 50 commands/s.
const (
	dovecotHeld        = 2000
	dovecotHeldRate    = 50
	dovecotHeldStagger = 8 * time.Second
)

// TestDovecotHoldsConnections holds 2,000 logged-in IDLE connections
// (RFC 2177) against a real Dovecot while offering a small command rate:
// every connection is set up (phase hold) and held through the window, none
// drops, and the command rate is delivered (≥ 99%). The test process needs
// about 2,100 file descriptors; it raises its RLIMIT_NOFILE if it must.
func TestDovecotHoldsConnections(t *testing.T) {
	dc := dovecotFromEnv(t)
	producer.RaiseNoFile(t, 3*dovecotHeld)
	f := newDovecotFleet(t)
	o := dc.options(t, "dchold", dc.Password, &testkit.Buffer{})
	o.IdlePeriod = 2 * time.Second // re-IDLE several times in the window
	f.start(o)
	f.waitLive(1)
	col := f.collect("dchold", 1)
	cmd := fmt.Sprintf(`{"run":"dchold","step":1,"rate":%d,"connections":%d,"stagger":"%v","warmup":"%v","duration":"5s"}`,
		dovecotHeldRate, dovecotHeld, dovecotHeldStagger, dovecotHeldStagger+3*time.Second)
	if r := f.request(cmd, 1); !r[0].Accepted || r[0].Connections != dovecotHeld {
		t.Fatalf("step reply = %+v, want accepted holding %d", r[0], dovecotHeld)
	}
	bs := col.finals(t, 1, time.Minute)["dchold"]
	checkBatches(t, map[string][]*messages.SampleBatch{"dchold": bs})
	checkHeld(t, bs, dovecotHeld)
	s, c, d := sums(bs)
	t.Logf("held %d; scheduled %d, completed %d, dropped %d", dovecotHeld, s, c, d)
	if s == 0 || c < s*99/100 {
		t.Errorf("scheduled %d, completed %d: want ≥ 99%% completed beside the held connections", s, c)
	}
}
