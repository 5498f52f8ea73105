package main

import (
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/imapload/imapload/internal/testkit"
)

// proc is one imapload subprocess with its output captured. The test's
// cleanup kills it if it still runs and waits for it, so no process outlives
// the test.
type proc struct {
	name    string
	cmd     *exec.Cmd
	stdout  testkit.Buffer
	stderr  testkit.Buffer
	done    chan struct{} // closed once the process has exited
	waitErr error         // cmd.Wait's result, set before done closes
}

// startProc starts the binary with args; env is added to the environment.
func startProc(t *testing.T, name string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, done: make(chan struct{})}
	p.cmd = exec.Command(binary(t), args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.cleanup(t) })
	return p
}

func (p *proc) cleanup(t *testing.T) {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	if t.Failed() {
		t.Logf("--- %s stdout:\n%s", p.name, p.stdout.String())
		t.Logf("--- %s stderr:\n%s", p.name, p.stderr.String())
	}
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitMatch polls stdout until re matches and returns its first group (or
// the whole match); it fails if the process exits first or time runs out.
func (p *proc) waitMatch(t *testing.T, re *regexp.Regexp, within time.Duration) string {
	t.Helper()
	var m []string
	testkit.WaitFor(t, within, p.name+" to print "+re.String(), func() bool {
		if p.exited() {
			t.Fatalf("%s exited (%v) before printing %s\nstderr:\n%s", p.name, p.waitErr, re, p.stderr.String())
		}
		m = re.FindStringSubmatch(p.stdout.String())
		return m != nil
	})
	return m[len(m)-1]
}

// stop sends SIGTERM and fails unless the process exits with status 0 within
// the bound; it returns how long the exit took.
func (p *proc) stop(t *testing.T, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	p.signal(t)
	return p.awaitExit(t, start, within)
}

// signal sends SIGTERM, as a container runtime or systemd does.
func (p *proc) signal(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !p.exited() {
		t.Fatalf("SIGTERM %s: %v", p.name, err)
	}
}

func (p *proc) awaitExit(t *testing.T, start time.Time, within time.Duration) time.Duration {
	t.Helper()
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case <-p.done:
	case <-timer.C:
		t.Errorf("%s still running %v after SIGTERM", p.name, within)
		return within
	}
	if p.waitErr != nil {
		var ee *exec.ExitError
		if errors.As(p.waitErr, &ee) {
			t.Errorf("%s exit after SIGTERM = %v, want status 0\nstderr tail:\n%s", p.name, ee, tail(p.stderr.String(), 15))
		} else {
			t.Errorf("%s wait: %v", p.name, p.waitErr)
		}
	}
	return time.Since(start)
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// code is the exit code of a process that has exited (-1 if it was killed).
func (p *proc) code() int {
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		return ee.ExitCode()
	}
	if p.waitErr != nil {
		return -1
	}
	return 0
}
