package producer_test

import (
	"fmt"
	"testing"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/producer"
)

// TestDovecotAuthMethods runs a short step against a real Dovecot for each
// login method the producer has beside LOGIN on a plain connection (which
// TestDovecotEndToEnd covers): AUTHENTICATE PLAIN, and both after STARTTLS
// on the cleartext port. An even mix gives every phase samples in a short
// step; every phase succeeds with no error, STARTTLS dials
// time their TLS part, and no password reaches a batch or a log line.
func TestDovecotAuthMethods(t *testing.T) {
	dc := dovecotFromEnv(t)
	for i, tc := range []struct {
		name     string
		auth     string
		startTLS bool
	}{
		{"AUTHENTICATE PLAIN", producer.AuthPlain, false},
		{"STARTTLS and LOGIN", producer.AuthLogin, true},
		{"STARTTLS and AUTHENTICATE PLAIN", producer.AuthPlain, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newDovecotFleet(t)
			logs := &testkit.Buffer{}
			id := fmt.Sprintf("dcauth%d", i+1)
			o := dc.options(t, id, dc.Password, logs)
			o.Auth, o.StartTLS = tc.auth, tc.startTLS
			if tc.startTLS {
				o.TLSConfig = dc.TLSConfig(t)
			}
			f.start(o)
			f.waitLive(1)
			bs := f.runStep(id, "dcauth", i+1, `"rate":40,"warmup":"500ms","duration":"2s","stagger":"200ms",`+
				`"mix":{"list":1,"select":1,"fetch":1,"store":1,"append":1,"logout":1}`)
			got := map[string][]*messages.SampleBatch{id: bs}
			checkBatches(t, got)
			checkEveryPhase(t, got, []string{id})
			checkNoPassword(t, got, logs, dc.Password)
			var tlsCount uint64
			for _, b := range bs {
				if ps := b.PhaseStats(messages.Dial); ps != nil {
					tlsCount += ps.TLS.Count
				}
			}
			if tc.startTLS != (tlsCount > 0) {
				t.Errorf("%s: %d dials with a TLS time, want them iff STARTTLS", tc.name, tlsCount)
			}
		})
	}
}
