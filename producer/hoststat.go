package producer

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The host's own account of why a runnable producer did not run, which
// tells a schedule lag the producer caused apart from one the host imposed.
// Linux keeps each as a cumulative time in a file:
//
//   - /proc/self/task/*/schedstat, 2nd field: ns each thread waited on a run
//     queue for a CPU (the kernel's sched_info run_delay);
//   - /proc/pressure/cpu, "some" total=: µs during which some task of the
//     host waited for a CPU (PSI);
//   - cpu.stat of the process's cgroup: time its CPU quota throttled it,
//     throttled_usec (v2) or throttled_time in ns (v1).
//
// Elsewhere, or when a file is missing or unreadable, the counter reads as
// zero. The parsers below are pure; the readers are the thin edge.

const (
	procTasks    = "/proc/self/task"
	procPressure = "/proc/pressure/cpu"
	procCgroup   = "/proc/self/cgroup"
)

// parseSchedstat returns the run-queue wait of a schedstat line
// ("<ns on cpu> <ns waiting> <timeslices>").
func parseSchedstat(s string) (time.Duration, bool) {
	f := strings.Fields(s)
	if len(f) < 2 {
		return 0, false
	}
	return parseCount(f[1], time.Nanosecond)
}

// parsePressure returns the total of the "some" line of a PSI file
// ("some avg10=1.82 avg60=11.66 avg300=8.96 total=40181650", µs).
func parsePressure(s string) (time.Duration, bool) {
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "some" {
			continue
		}
		for _, kv := range f[1:] {
			if v, ok := strings.CutPrefix(kv, "total="); ok {
				return parseCount(v, time.Microsecond)
			}
		}
	}
	return 0, false
}

// parseStatField returns key's value in a flat keyed file such as cpu.stat
// ("throttled_usec 1234" lines), in unit.
func parseStatField(s, key string, unit time.Duration) (time.Duration, bool) {
	for line := range strings.Lines(s) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), " "); ok && k == key {
			return parseCount(strings.TrimSpace(v), unit)
		}
	}
	return 0, false
}

// parseCount reads a non-negative decimal count of unit, refusing values a
// Duration cannot hold.
func parseCount(s string, unit time.Duration) (time.Duration, bool) {
	n, err := strconv.ParseUint(s, 10, 63)
	if err != nil || n > uint64(1<<63-1)/uint64(unit) {
		return 0, false
	}
	return time.Duration(n) * unit, true
}

// cgroupPaths returns, from /proc/self/cgroup, the process's cgroup v2 path
// (the "0::/path" line) and its cgroup v1 path in the hierarchy whose
// controllers include cpu ("4:cpu,cpuacct:/path"); "" when absent.
func cgroupPaths(s string) (v2, v1 string) {
	for line := range strings.Lines(s) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2 = parts[2]
		case strings.Contains(","+parts[1]+",", ",cpu,"):
			v1 = parts[2]
		}
	}
	return v2, v1
}

// statFile is a place the throttled time may be kept.
type statFile struct {
	path string
	key  string
	unit time.Duration
}

// throttleFiles lists, in the order to try, where the cgroup described by
// cgroup (the text of /proc/self/cgroup) keeps its throttled time. On a
// hybrid host the v2 hierarchy carries no cpu controller, so its cpu.stat
// lacks throttled_usec and the v1 file is the one that answers.
func throttleFiles(cgroup string) []statFile {
	v2, v1 := cgroupPaths(cgroup)
	var out []statFile
	if v2 != "" {
		for _, root := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
			out = append(out, statFile{filepath.Join(root, v2, "cpu.stat"), "throttled_usec", time.Microsecond})
		}
	}
	if v1 != "" {
		for _, root := range []string{"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"} {
			out = append(out, statFile{filepath.Join(root, v1, "cpu.stat"), "throttled_time", time.Nanosecond})
		}
	}
	return out
}

// read returns the file's throttled time.
func (f statFile) read() (time.Duration, bool) {
	b, err := os.ReadFile(f.path)
	if err != nil {
		return 0, false
	}
	return parseStatField(string(b), f.key, f.unit)
}

// readRunDelay sums the run-queue waits of the process's threads. A thread
// that exits between the listing and the read is skipped; its past waits
// leave the sum, which the meter's clamp at zero absorbs.
func readRunDelay() (time.Duration, bool) {
	tasks, err := os.ReadDir(procTasks)
	if err != nil {
		return 0, false
	}
	var sum time.Duration
	read := 0
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(procTasks, t.Name(), "schedstat"))
		if d, ok := parseSchedstat(string(b)); err == nil && ok {
			sum, read = sum+d, read+1
		}
	}
	return sum, read > 0
}

func readPressure() (time.Duration, bool) {
	b, err := os.ReadFile(procPressure)
	if err != nil {
		return 0, false
	}
	return parsePressure(string(b))
}

// throttleReader finds the file that answers for the process's cgroup, or
// returns nil. The files that failed to answer are not tried again.
func throttleReader() func() (time.Duration, bool) {
	b, err := os.ReadFile(procCgroup)
	if err != nil {
		return nil
	}
	for _, f := range throttleFiles(string(b)) {
		if _, ok := f.read(); ok {
			return f.read
		}
	}
	return nil
}

// hostCounter is one cumulative time the host keeps. A counter whose read
// failed once is never read again: a missing file stays missing, and a
// producer should not pay a failing open at every batch.
type hostCounter struct {
	read func() (time.Duration, bool) // nil: unavailable
	off  atomic.Bool
}

// total returns the counter's current value, false when it is unavailable.
func (c *hostCounter) total() (time.Duration, bool) {
	if c == nil || c.read == nil || c.off.Load() {
		return 0, false
	}
	v, ok := c.read()
	if !ok {
		c.off.Store(true)
	}
	return v, ok
}

// hostFiles are the counters of one producer, found once when it starts
// and shared by the meters of its steps.
type hostFiles struct {
	runDelay, pressure, throttled hostCounter
}

// newHostFiles locates the counters. It reads /proc/self/cgroup and probes
// the cgroup's cpu.stat.
func newHostFiles() *hostFiles {
	h := &hostFiles{}
	h.runDelay.read = readRunDelay
	h.pressure.read = readPressure
	h.throttled.read = throttleReader()
	return h
}
