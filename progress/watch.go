package progress

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/imapload/imapload/messages"
	"github.com/nats-io/nats.go"
	"golang.org/x/term"
)

// IsTerminal reports whether w is a terminal (progress is redrawn in place).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// defaultWidth is the width assumed of a terminal that does not say its own.
const defaultWidth = 80

// width is how many columns a line redrawn on the terminal w may take: one
// less than the terminal has, read at each draw (it may be resized), so the
// cursor never reaches the last column, where some terminals wrap.
func width(w io.Writer) int {
	cols := defaultWidth
	if f, ok := w.(*os.File); ok {
		if c, _, err := term.GetSize(int(f.Fd())); err == nil && c > 1 {
			cols = c
		}
	}
	return cols - 1
}

// fit cuts line to at most n runes, the last of them "…" when it was cut:
// a line redrawn in place must never wrap, or each redraw leaves a line
// behind.
func fit(line string, n int) string {
	if n <= 0 || utf8.RuneCountInString(line) <= n {
		return line
	}
	return string([]rune(line)[:n-1]) + "…"
}

// Watch prints cmd's progress to w until ctx is done, then ends the line. On a
// terminal (tty true) the line is redrawn every 250 ms, cut to the
// terminal's width; otherwise a whole line is printed every interval
// (default 2s).
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
			fmt.Fprint(w, "\r\033[K"+fit(line, width(w)))
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
