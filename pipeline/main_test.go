package pipeline_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind: Run
// promises to stop everything it started before it returns.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
