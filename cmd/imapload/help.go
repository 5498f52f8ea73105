package main

import (
	"regexp"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// --help is generated from the flags themselves, so it cannot drift: every
// flag names its environment variable (applyEnv's envName), and a default
// reads as a person writes it.

// documentFlags ends every flag's usage with the environment variable that
// sets it, on cmd and every command below it.
func documentFlags(cmd *cobra.Command) {
	document := func(f *pflag.Flag) {
		if f.Name == "help" || f.Name == "version" || envNoted.MatchString(f.Usage) {
			return
		}
		u := handEnv.ReplaceAllString(f.Usage, "")
		note := defaultNote.FindString(u) // a default the usage states, last as pflag's are
		f.Usage = defaultNote.ReplaceAllString(u, "") + " [$" + envName(f.Name) + "]" + note
	}
	cmd.Flags().VisitAll(document)
	cmd.PersistentFlags().VisitAll(document)
	for _, c := range cmd.Commands() {
		documentFlags(c)
	}
}

var (
	// handEnv is a hand-kept mention of a flag's variable, now generated.
	handEnv = regexp.MustCompile(` \(env IMAPLOAD_[A-Z_]+\)`)
	// envNoted is a usage that already ends with its generated variable.
	envNoted = regexp.MustCompile(`\[\$IMAPLOAD_[A-Z_]+\]$`)
	// defaultNote is "(default …)" written in a usage.
	defaultNote = regexp.MustCompile(`\s*\(default[: ](?:[^()]|\([^()]*\))*\)`)
)

// hideDefault keeps pflag from printing a default that is a sentinel (a
// negative duration meaning "derived"): the usage says what it is. Only
// --help reads DefValue; the flag's value stays the sentinel.
func hideDefault(f *pflag.Flag) { f.DefValue = "0s" }
