package main

import (
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/pipeline"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// printEndpoint says where a run's NATS is once it is up and, with
// --listen, the exact command that adds a producer on another host; fs are
// the run's flags, imap its target.
func printEndpoint(w io.Writer, fs *pflag.FlagSet, e pipeline.Endpoint, imap string) {
	switch {
	case !e.Embedded:
		fmt.Fprintf(w, "NATS %s: %s\n", e.URL, aggregatorWords(e.Aggregator))
	case e.Credentials == "":
		fmt.Fprintf(w, "embedded NATS on %s (tail results: nats sub -s %s 'imapload.results.>')\n", e.URL, e.URL)
	default:
		printJoin(w, fs, e, imap)
	}
}

// printEndpoint is the run's endpoint, and how long it waits for others.
func (c *runConfig) printEndpoint(cmd *cobra.Command, e pipeline.Endpoint) {
	w := cmd.OutOrStdout()
	printEndpoint(w, cmd.Flags(), e, c.IMAP)
	if n := c.Fleet.ExpectProducers; n > 0 {
		fmt.Fprintf(w, "waiting up to %v for %s from elsewhere (--expect-producers)\n", c.Fleet.ProducersWait, plural(n, "producer"))
	}
}

func aggregatorWords(started bool) string {
	if started {
		return "no aggregator was consuming its batches, so this run started one"
	}
	return "an aggregator already consumes its batches, so this run started none"
}

// printJoin prints how a producer on another host joins the run: the
// server's URL, where the credentials are, and the command, whose only
// credential is a seed file.
func printJoin(w io.Writer, fs *pflag.FlagSet, e pipeline.Endpoint, imap string) {
	fmt.Fprintf(w, "NATS for producers on other hosts: %s, NKey users only (credentials in %s, seeds mode 0600)\n", e.URL, e.Credentials)
	line, notes := joinCommand(fs, e.URL, bus.SeedFile(e.Credentials, e.Remote[0]), e.Remote[0])
	fmt.Fprintf(w, "to add a producer on another host, copy its seed %s there (and the files the command names), then run:\n  %s\n",
		bus.SeedFile(e.Credentials, e.Remote[0]), line)
	if n := len(e.Remote); n > 1 {
		fmt.Fprintf(w, "  the others likewise, each with its own --id and seed: %s … %s (%s)\n", e.Remote[1], e.Remote[n-1], bus.SeedFile(e.Credentials, "<id>"))
	}
	if host, _, err := net.SplitHostPort(imap); err == nil && isLoopback(host) {
		notes = append(notes, fmt.Sprintf("--imap %s is this host's loopback: give the IMAP server's address as the other host reaches it", imap))
	}
	for _, n := range notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

// joinCommand is the `imapload producer` command of a remote producer: the
// producer flags this run was given, as given, then NATS, seed and id. A
// secret given by value is replaced by its -file flag with a placeholder,
// and a note says so: no secret is ever printed.
func joinCommand(fs *pflag.FlagSet, url, seed, id string) (string, []string) {
	producerFlags := pflag.NewFlagSet("producer", pflag.ContinueOnError)
	(&producerConfig{}).add(producerFlags)
	args := []string{"imapload", "producer", "--nats", url, "--nats-nkey", shellQuote(seed), "--id", id}
	var notes []string
	fs.Visit(func(f *pflag.Flag) {
		if producerFlags.Lookup(f.Name) == nil || strings.HasPrefix(f.Name, "nats") || f.Name == "id" {
			return
		}
		if secretOf(f) == f.Name && fs.Changed(f.Name+"-file") {
			return // set from its file, whose path is printed
		}
		if secretOf(f) == f.Name {
			file := strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_")) + "_FILE"
			args = append(args, "--"+f.Name+"-file", file)
			notes = append(notes, fmt.Sprintf("%s: a file holding --%s on that host (a secret is never put on a command line)", file, f.Name))
			return
		}
		args = append(args, flagArg(f))
	})
	return strings.Join(args, " "), notes
}

// flagArg is f as a command-line argument, quoted for a POSIX shell.
func flagArg(f *pflag.Flag) string {
	if f.Value.Type() == "bool" {
		if f.Value.String() == "true" {
			return "--" + f.Name
		}
		return "--" + f.Name + "=" + f.Value.String()
	}
	return "--" + f.Name + " " + shellQuote(f.Value.String())
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote quotes s for a POSIX shell unless it needs none.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
