package aggregator

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/imapload/imapload/internal/testkit"
)

// TestMain fails the package if a test leaves a goroutine behind: Run must
// wait for everything it started. Up to 8 tests run at once: the parallel
// ones each wait on a NATS server of their own.
func TestMain(m *testing.M) {
	testkit.SetParallel(8)
	goleak.VerifyTestMain(m)
}
