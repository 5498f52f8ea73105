// Command imapload measures how many IMAP operations per second a server
// sustains before it stops keeping up. See README.md.
//
// Subcommands:
//   - run: find the knee of your IMAP server in one process (NATS, producers,
//     aggregator, reporter and ramp), and let producers on other hosts join;
//   - demo: run against the embedded test IMAP server;
//   - seed: fill accounts with mail before a run;
//   - the fleet's roles, one process each: nats (an embedded NATS server with
//     JetStream), roles (a nats-server configuration with a user per role),
//     producer, aggregator, reporter;
//   - driving a fleet: step (publish one step command), ramp (drive a run
//     step by step until the knee);
//   - reading results: tail (follow a run's results), compare (two runs);
//   - observe: scrape the server's own metrics during every step;
//   - imapserver: the embedded test IMAP server on its own.
//
// Exit codes (package verdict): 0 a verdict was reached and every threshold
// passed, 1 the run could not be carried out, 2 a usage error, 3 the server
// is not answering correctly, 4 inconclusive, 5 a threshold failed, 6 no rate held.
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
