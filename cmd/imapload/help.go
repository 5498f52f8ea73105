package main

import (
	"regexp"
	"time"

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
		if printsDefault(f) {
			note = "" // the flag's own default (the demo's, say) replaces what its usage says
		}
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

// printsDefault reports whether pflag prints f's default: it leaves out
// zero values (its Flag.defaultIsZeroValue, for our flags' types).
func printsDefault(f *pflag.Flag) bool {
	switch f.DefValue {
	case "", "0", "0s", "false", "[]":
		return false
	}
	return true
}

// derivedDurationVar declares a duration flag whose default, -1, means
// "derived" (the usage says how). pflag would print the sentinel: --help
// shows none (only --help reads DefValue; the value stays -1).
func derivedDurationVar(fs *pflag.FlagSet, p *time.Duration, name, usage string) {
	fs.DurationVar(p, name, -1, usage)
	fs.Lookup(name).DefValue = "0s"
}
