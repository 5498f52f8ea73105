package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/imapload/imapload/progress"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// termFlags say how run and demo share a terminal between their live
// progress line and the roles' logs: on a terminal the line is redrawn in
// place, so INFO lines from the roles would break it up. There the roles log
// only warnings and errors to stderr (unless --log-level is given), each one
// clearing the line first, and --log-file gets every line at --log-level.
type termFlags struct {
	Terminal string // --terminal: auto, yes or no
	LogFile  string // --log-file: every log line, "" for none
}

func (t *termFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&t.Terminal, "terminal", "auto", "redraw the progress line in place and keep INFO logs off it: auto (when stdout is a terminal), yes or no")
	fs.StringVar(&t.LogFile, "log-file", "", "append every log line (at --log-level) to this file; on a terminal stderr then shows only warnings and errors")
}

func (t *termFlags) check() error {
	switch t.Terminal {
	case "auto", "yes", "no":
		return nil
	}
	return fmt.Errorf("--terminal %q: want auto, yes or no", t.Terminal)
}

// tty reports whether the progress line is redrawn in place on out.
func (t *termFlags) tty(out io.Writer) bool {
	switch t.Terminal {
	case "yes":
		return true
	case "no":
		return false
	}
	return progress.IsTerminal(out)
}

// logger returns the roles' logger and a function that closes the log
// file. Level is --log-level; given says whether it was given (flag or
// environment), which on a terminal keeps INFO on stderr.
func (t *termFlags) logger(cmd *cobra.Command, level string, tty bool) (*slog.Logger, func(), error) {
	stderr := cmd.ErrOrStderr()
	stderrLevel := level
	if tty && !cmd.Flags().Changed("log-level") {
		stderrLevel = "warn"
	}
	if tty && progress.IsTerminal(stderr) {
		stderr = lineClearer{stderr}
	}
	h := newLogger(stderr, stderrLevel).Handler()
	if t.LogFile == "" {
		return slog.New(h), func() {}, nil
	}
	f, err := os.OpenFile(t.LogFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, usage(fmt.Errorf("--log-file: %w", err))
	}
	both := slog.NewMultiHandler(h, newLogger(f, level).Handler())
	return slog.New(both), func() { f.Close() }, nil
}

// lineClearer clears the terminal's current line (the progress line, when
// stdout and stderr are the same terminal) before each log record; the
// progress line is redrawn below it.
type lineClearer struct{ w io.Writer }

func (l lineClearer) Write(b []byte) (int, error) {
	if _, err := io.WriteString(l.w, "\r\033[K"); err != nil {
		return 0, err
	}
	return l.w.Write(b)
}
