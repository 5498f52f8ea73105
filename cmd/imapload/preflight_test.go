package main

import (
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/internal/testkit"
)

// TestProducerPreflight: a producer names a mistake in its IMAP flags at
// start, with its fix, and keeps running (a fleet's producers may start
// before the server: one not there yet is only reported).
func TestProducerPreflight(t *testing.T) {
	t.Parallel()
	implicit, err := embedded.StartIMAP(&embedded.IMAPOptions{Users: 2, TLS: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { implicit.Close() })
	url := startNATS(t, nil).ClientURL()
	for _, tc := range []struct{ name, imap, says string }{
		{"tls port without --tls", implicit.Addr(), "add --tls"},
		{"server not up yet", testkit.ClosedAddr(t), "cannot be reached yet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := startCLI(t, "producer", "producer", "--nats", url, "--imap", tc.imap, "--id", "pf-"+strings.Fields(tc.name)[0],
				"--accounts-count", "2", "--sessions", "1")
			testkit.WaitFor(t, time.Minute, "the producer to warn "+tc.says, func() bool {
				return strings.Contains(p.stderr.String(), tc.says)
			})
			select {
			case <-p.done:
				t.Fatalf("the producer returned (%v) after its warning; want it running", p.err)
			default:
			}
		})
	}
}
