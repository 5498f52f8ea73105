package embedded_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: both
// servers promise that Shutdown/Close wait for everything they started.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
