// Command imapload measures how many IMAP operations per second a server
// sustains before it stops keeping up. See README.md.
//
// Subcommands: demo (everything in one process), nats (an embedded NATS server
// with JetStream), imapserver (the embedded test IMAP server), producer,
// aggregator, reporter, step (publish one step command), ramp (drive a run
// step by step until the knee) and seed (fill accounts with mail before a run).
//
// Exit codes (package verdict): 0 a verdict was reached and every threshold
// passed, 1 the run could not be carried out, 2 a usage error, 3 the server
// is not answering correctly, 4 inconclusive, 5 a threshold failed.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRoot().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "imapload:", err)
		stop()
		os.Exit(exitCode(err))
	}
}
