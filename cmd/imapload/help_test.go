package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestHelpGenerated: every flag of every command names its environment
// variable in --help, and no default is printed twice or as a sentinel.
func TestHelpGenerated(t *testing.T) {
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" || f.Name == "version" {
				return
			}
			if want := "[$" + envName(f.Name) + "]"; !strings.Contains(f.Usage, want) {
				t.Errorf("imapload %s --%s usage %q lacks %s", c.Name(), f.Name, f.Usage, want)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot())

	for _, cmd := range []string{"demo", "step", "ramp", "producer", "imapserver", "nats", "aggregator", "reporter", "tail", "compare", "roles", "seed"} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		out, _, err := runCLI(ctx, cmd, "--help")
		cancel()
		if err != nil {
			t.Fatalf("imapload %s --help: %v", cmd, err)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.Count(line, "(default") > 1 || strings.Contains(line, "-1ns") || strings.Contains(line, "(default )") {
				t.Errorf("imapload %s --help: %q", cmd, strings.TrimSpace(line))
			}
		}
	}
}
