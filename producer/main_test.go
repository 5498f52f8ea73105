package producer

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/imapload/imapload/internal/testkit"
)

// TestMain fails the package if a test leaves a goroutine behind: Run,
// steps and sessions promise to wait for everything they start.
//
// Benchmarks run with the Go runtime's defaults, as `imapload producer`
// does; GODEBUG=schedtrace=2147483647 in the environment measures the
// opt-in setting that keeps the runtime's monitor thread awake
// (BENCHMARKS.md, docs/deploy.md, "A cheap producer").
//
// Up to 8 tests run at once: the parallel ones wait on outages, timeouts
// and servers of their own.
func TestMain(m *testing.M) {
	testkit.SetParallel(8)
	goleak.VerifyTestMain(m)
}
