//go:build unix

package producer

import (
	"syscall"
	"testing"
)

// RaiseNoFile raises the test process's soft RLIMIT_NOFILE to at least need
// file descriptors (within the hard limit), for tests that hold thousands of
// connections; the soft limit is put back when the test ends. It fails the
// test when the hard limit is below need.
func RaiseNoFile(t testing.TB, need uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("getrlimit(RLIMIT_NOFILE): %v", err)
	}
	if lim.Cur >= need {
		return
	}
	if lim.Max < need {
		t.Fatalf("RLIMIT_NOFILE hard limit %d, want ≥ %d file descriptors (raise it: ulimit -Hn)", lim.Max, need)
	}
	old := lim.Cur
	lim.Cur = need
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("setrlimit(RLIMIT_NOFILE, %d): %v", need, err)
	}
	t.Cleanup(func() {
		lim.Cur = old
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	})
}
