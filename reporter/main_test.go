package reporter_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind: Run waits
// for its consumer to stop before it returns.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
