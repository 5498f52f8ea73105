package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/imapload/imapload/internal/testkit"
)

// The imapload binary, built once by TestMain for the multi-process tests.
var (
	binPath string
	binErr  error
)

// parallelTests is how many parallel tests run at once unless -parallel
// says otherwise. Most of this package's tests wait on real processes
// through steps of seconds, so the default (GOMAXPROCS, 2 on the
// development machine) would leave the CPU idle and run them one pair at a
// time.
const parallelTests = 12

// TestMain builds the binary, clears IMAPLOAD_* configuration the caller's
// shell may hold (it would reconfigure every command under test; the
// variables of the test suites stay), runs up to
// parallelTests tests at once, and fails the package if a test leaves a
// goroutine behind.
func TestMain(m *testing.M) {
	clearEnv()
	testkit.SetParallel(parallelTests)
	dir, err := os.MkdirTemp("", "imapload-cmdtest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "cmd test:", err)
		os.Exit(1)
	}
	binPath, binErr = buildBinary(dir)
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.RemoveAll(dir)
		os.Exit(code)
	}))
}

func clearEnv() {
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		// The variables no command reads (IMAPLOAD_LONG, IMAPLOAD_E2E,
		// IMAPLOAD_DOVECOT_*, …) stay: they enable this package's suites.
		if strings.HasPrefix(name, "IMAPLOAD_") && !slices.Contains(envNotFlags, name) && !hasAnyPrefix(name, envNotFlagPrefixes) {
			os.Unsetenv(name)
		}
	}
}

// buildBinary runs `go build` of this package into dir.
func buildBinary(dir string) (string, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("go tool not found: %w", err)
	}
	path := filepath.Join(dir, "imapload")
	out, err := exec.Command(gobin, "build", "-o", path, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	return path, nil
}

// binary returns the built imapload binary or fails the test.
func binary(t *testing.T) string {
	t.Helper()
	if binErr != nil {
		t.Fatalf("imapload binary: %v", binErr)
	}
	return binPath
}
