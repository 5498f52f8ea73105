package producer

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind: Run,
// steps and sessions promise to wait for everything they start.
//
// Benchmarks run with the Go runtime's defaults, as `imapload producer`
// does; GODEBUG=schedtrace=2147483647 in the environment measures the
// opt-in setting that keeps the runtime's monitor thread awake
// (BENCHMARKS.md, README "A cheap producer").
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
