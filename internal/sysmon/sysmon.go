// Package sysmon keeps the Go runtime's system monitor out of its deep
// sleep in processes that run IMAP sessions, which saves them 20–45% of
// their CPU per session and per command (BENCHMARKS.md).
//
// When every P is idle, the runtime's monitor thread (sysmon) parks, and the
// next system call of any goroutine wakes it again: a futex wake, a thread
// switch, its 20 µs nap and a park. A producer waits for replies between
// almost every command, so it paid that once per command: 10–15 µs of a
// 44–50 µs FETCH. The runtime skips the deep sleep only while its scheduler
// trace is on (GODEBUG schedtrace > 0), so the producer runs itself with a
// trace period of 2^31−1 ms (24.8 days). The trace prints nothing while the
// host has been up for less than that; after, it prints one "SCHED" line on
// stderr when the process starts and then one every 24.8 days. The monitor
// then wakes at most every 10 ms while the process idles.
//
// A GODEBUG that already sets schedtrace is left alone, so
// GODEBUG=schedtrace=0 restores the runtime's default.
package sysmon

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// Setting is the GODEBUG setting that keeps sysmon awake.
const Setting = "schedtrace=2147483647"

// Wanted reports whether a process with GODEBUG value godebug should be
// re-executed with Setting: unless it sets schedtrace already.
func Wanted(godebug string) bool {
	for _, kv := range strings.Split(godebug, ",") {
		if k, _, _ := strings.Cut(strings.TrimSpace(kv), "="); k == "schedtrace" {
			return false
		}
	}
	return true
}

// Env returns env (KEY=value entries) with Setting added to GODEBUG.
func Env(env []string) []string {
	out := make([]string, 0, len(env)+1)
	found := false
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "GODEBUG="); ok && !found {
			found = true
			if v != "" {
				e = "GODEBUG=" + v + "," + Setting
			} else {
				e = "GODEBUG=" + Setting
			}
		}
		out = append(out, e)
	}
	if !found {
		out = append(out, "GODEBUG="+Setting)
	}
	return out
}

// Reexec replaces the process with its own executable, run with the same
// arguments and Setting added to GODEBUG, unless GODEBUG sets schedtrace
// already. Call it first thing, before the process starts work or opens
// anything. It returns nil without executing when not wanted, and an error
// when the exec failed; the process can carry on either way.
func Reexec() error {
	if !Wanted(os.Getenv("GODEBUG")) {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("sysmon: cannot find this executable: %w", err)
	}
	if len(os.Args) == 0 {
		return errors.New("sysmon: no arguments")
	}
	err = syscall.Exec(exe, os.Args, Env(os.Environ()))
	return fmt.Errorf("sysmon: re-exec %s: %w", exe, err)
}
