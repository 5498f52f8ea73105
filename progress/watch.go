package progress

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/nats-io/nats.go"
	"golang.org/x/term"
)

// IsTerminal reports whether w is a terminal (progress is redrawn in place).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Watch prints cmd's progress to w until ctx is done, then ends the line. On a
// terminal (tty true) the line is redrawn every 250 ms; otherwise a line is
// printed every interval (default 2s).
func Watch(ctx context.Context, nc *nats.Conn, cmd messages.StepCommand, w io.Writer, tty bool, interval time.Duration) error {
	var mu sync.Mutex
	tr := NewTracker(cmd)
	sub, err := nc.Subscribe(messages.StepSamplesFilter(cmd.Run, cmd.Step), func(m *nats.Msg) {
		b, err := messages.DecodeBatch(m.Data)
		if err != nil {
			return // the aggregator counts corrupt batches; progress only shows
		}
		mu.Lock()
		tr.Add(b)
		mu.Unlock()
	})
	if err != nil {
		return fmt.Errorf("progress: subscribe: %w", err)
	}
	defer sub.Unsubscribe()
	if interval <= 0 {
		interval = 2 * time.Second
	}
	if tty {
		interval = 250 * time.Millisecond
	}
	start := time.Now()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	show := func() {
		mu.Lock()
		line := tr.Line(time.Since(start))
		mu.Unlock()
		if tty {
			fmt.Fprint(w, "\r\033[K"+line)
		} else {
			fmt.Fprintln(w, line)
		}
	}
	for {
		select {
		case <-ctx.Done():
			show()
			if tty {
				fmt.Fprintln(w)
			}
			return nil
		case <-tick.C:
			show()
		}
	}
}
