package producer

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind: Run,
// steps and sessions promise to wait for everything they start.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
