package producer

import (
	"fmt"
	"testing"
)

// BenchmarkClientCommand is each client command that leaves the mailboxes
// as it found them, served and recorded one at a time on one persistent
// session with GOMAXPROCS 1: what the producer spends per command beside
// BenchmarkCommand's fetch, select and store. (COPY, MOVE and EXPUNGE
// change the mailboxes, and IDLE appends and, against Dovecot, waits about
// 0.5 s for its push: they are measured by the tests' steps, not here.)
func BenchmarkClientCommand(b *testing.B) {
	tg := newBenchTarget(b)
	for _, cmd := range []string{"status", "search_date", "search_header", "body"} {
		b.Run(fmt.Sprintf("%s/procs=1/inflight=1/%s", tg.name, cmd), func(b *testing.B) { benchCommand(b, tg, 1, 1, cmd) })
	}
}
