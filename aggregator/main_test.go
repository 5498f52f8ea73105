package aggregator

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind: Run must
// wait for everything it started.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
