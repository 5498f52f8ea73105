package producer

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/imapload/imapload/internal/sysmon"
)

// TestMain fails the package if a test leaves a goroutine behind: Run,
// steps and sessions promise to wait for everything they start.
//
// When benchmarks are asked for, the test binary first re-executes itself
// as `imapload producer` does (internal/sysmon), so they measure the
// producer's CPU as it runs; GODEBUG=schedtrace=0 measures Go's default.
func TestMain(m *testing.M) {
	flag.Parse()
	if b := flag.Lookup("test.bench"); b != nil && b.Value.String() != "" {
		if err := sysmon.Reexec(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	goleak.VerifyTestMain(m)
}
