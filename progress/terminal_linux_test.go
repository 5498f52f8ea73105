package progress

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/internal/testkit/natstest"
	"github.com/imapload/imapload/messages"
)

// openPTY opens a pseudo-terminal of cols columns: the master, read by the
// test as a terminal would, and the slave, the terminal the program writes to.
func openPTY(t *testing.T, cols uint16) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("no /dev/ptmx on this machine: the test needs a pseudo-terminal")
	}
	if err != nil {
		t.Fatal(err)
	}
	var unlock int32
	var n uint32
	ioctl(t, master, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock))
	ioctl(t, master, syscall.TIOCGPTN, unsafe.Pointer(&n))
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		t.Fatal(err)
	}
	ws := struct{ row, col, x, y uint16 }{24, cols, 0, 0}
	ioctl(t, slave, syscall.TIOCSWINSZ, unsafe.Pointer(&ws))
	t.Cleanup(func() { slave.Close(); master.Close() })
	return master, slave
}

func ioctl(t *testing.T, f *os.File, req uintptr, arg unsafe.Pointer) {
	t.Helper()
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, uintptr(arg)); e != 0 {
		t.Fatalf("ioctl %#x on %s: %v", req, f.Name(), e)
	}
}

// syncBuffer is what the terminal has shown, read from the master.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestWatchOnTerminal: on a terminal of 100 columns, a progress line longer
// than that (a long error kind, producers behind schedule) is drawn cut to
// 99 columns at every redraw, never wrapping; off a terminal it is whole.
func TestWatchOnTerminal(t *testing.T) {
	_, nc := natstest.Start(t)
	master, slave := openPTY(t, 100)
	if !IsTerminal(slave) || width(slave) != 99 {
		t.Fatalf("IsTerminal(pty) = %v, width = %d; want true, 99", IsTerminal(slave), width(slave))
	}
	var shown syncBuffer
	copied := make(chan struct{})
	go func() { defer close(copied); _, _ = io.Copy(&shown, master) }()

	cmd := messages.StepCommand{Run: "r1", Step: 1, Rate: 300, Duration: messages.Duration(time.Minute)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Watch(ctx, nc, cmd, slave, true, 0) }()
	var once sync.Once
	wait := func() error { // Watch ends before the terminal closes
		var err error
		once.Do(func() { cancel(); err = <-done })
		return err
	}
	t.Cleanup(func() { _ = wait() })
	batch := &messages.SampleBatch{Run: "r1", Step: 1, Producer: "p1", To: int64(time.Second), Completed: 250, Scheduled: 300,
		Health: messages.Health{Saturated: true, CPU: 0.01, CPULimit: 1, RunDelay: 0.4},
		Phases: messages.PhaseList{{Phase: messages.Login, Attempted: 5, Succeeded: 0,
			Errors: messages.ErrorList{{Kind: "NO [AUTHENTICATIONFAILED] " + strings.Repeat("x", 60), Count: 5}}}}}
	data, err := messages.EncodeBatch(batch)
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 20*time.Second, "the batch counted on the drawn line", func() bool {
		_ = nc.Publish(messages.SamplesSubject("r1", 1, "p1"), data) // until the subscription sees one
		return strings.Contains(shown.String(), "errors 5")
	})
	if err := wait(); err != nil {
		t.Fatalf("Watch() error = %v", err)
	}
	testkit.WaitFor(t, 10*time.Second, "the last line ended", func() bool { return strings.HasSuffix(shown.String(), "\r\n") })
	draws := strings.Split(strings.ReplaceAll(shown.String(), "\033[K", ""), "\r")
	cut := 0
	for _, d := range draws {
		d = strings.TrimSuffix(d, "\n")
		if n := utf8.RuneCountInString(d); n > 99 {
			t.Errorf("Watch() drew a line of %d columns on a terminal of 100: %q", n, d)
		}
		if strings.HasSuffix(d, "…") {
			cut++
		}
	}
	if cut == 0 {
		t.Errorf("Watch() never cut the line; the terminal showed:\n%q", shown.String())
	}
	tr := NewTracker(cmd)
	tr.Add(batch)
	if line := tr.Line(time.Second); !strings.Contains(line, "BEHIND SCHEDULE: p1") {
		t.Errorf("Tracker.Line() = %q, want the whole line off a terminal", line)
	}
}
