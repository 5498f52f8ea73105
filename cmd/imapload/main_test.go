package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"
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
// shell may hold (it would reconfigure every command under test), runs up to
// parallelTests tests at once, and fails the package if a test leaves a
// goroutine behind.
func TestMain(m *testing.M) {
	clearEnv()
	setParallel(parallelTests)
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

// setParallel sets -test.parallel to n unless the command line set it.
func setParallel(n int) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}

func clearEnv() {
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "IMAPLOAD_") && name != "IMAPLOAD_E2E" {
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
