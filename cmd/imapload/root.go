package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// globalFlags are the flags of every command: the root's persistent flags.
type globalFlags struct {
	LogLevel   string // --log-level: debug, info, warn, error
	CPUProfile string // --cpuprofile: file for a CPU profile of the process, "" for none
}

func (g *globalFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&g.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&g.CPUProfile, "cpuprofile", "", "write a CPU profile of this process to the file")
}

// newRoot returns the imapload command. Every subcommand binds its flags to
// a config of its own (bind); the root completes them from the environment
// and the secret files before the subcommand checks them.
func newRoot() *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:           "imapload",
		Short:         "Find the rate at which an IMAP server stops keeping up",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			err := configure(cmd.Flags())
			for _, w := range unknownEnv(cmd.Root(), os.Environ()) {
				g.logger(cmd).Warn(w)
			}
			return err
		},
	}
	g.add(root.PersistentFlags())
	root.AddCommand(commands(g)...)
	for _, c := range root.Commands() {
		c.RunE = g.profiled(c.RunE)
	}
	documentFlags(root)
	markUsage(root)
	return root
}

// configure completes the parsed flags: from the environment, then the
// secrets from their files.
func configure(fs *pflag.FlagSet) error {
	if err := applyEnv(fs); err != nil {
		return err
	}
	return readSecretFiles(fs)
}

// applyEnv sets every flag the user did not give from IMAPLOAD_<FLAG> (upper
// case, '-' as '_'), so containers can be configured by environment alone. A
// secret given on the command line by either of its flags (--x or --x-file)
// is read from neither of their variables.
func applyEnv(fs *pflag.FlagSet) error {
	given := secretsGiven(fs)
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed || err != nil || given[secretOf(f)] {
			return
		}
		name := envName(f.Name)
		if v, ok := os.LookupEnv(name); ok {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s=%q: %w", name, v, e)
			}
		}
	})
	return err
}

// envName is the environment variable of a flag: IMAPLOAD_ + its name in
// upper case, with '_' for '-'.
func envName(flag string) string {
	return "IMAPLOAD_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// envNotFlags are the IMAPLOAD_ variables that are no flag's, read by
// others: the tests (internal/testkit, internal/fleetbench), deploy/'s
// scripts and compose files, and nats-server configurations (the NKeys of
// `imapload roles`). Variables with envNotFlagPrefixes are theirs too.
// TestEnvNotFlagsComplete keeps the list whole.
var (
	envNotFlags = []string{"IMAPLOAD_E2E", "IMAPLOAD_LONG", "IMAPLOAD_FLEETBENCH_AGGREGATOR", "IMAPLOAD_BIN",
		"IMAPLOAD_UID", "IMAPLOAD_GID", "IMAPLOAD_IMAGE", "IMAPLOAD_REPORT_DIR",
		"IMAPLOAD_NATS_PORT", "IMAPLOAD_NATS1_PORT", "IMAPLOAD_NATS2_PORT", "IMAPLOAD_NATS3_PORT"}
	envNotFlagPrefixes = []string{"IMAPLOAD_DOVECOT_", "IMAPLOAD_NKEY_"}
)

// unknownEnv returns a warning for every IMAPLOAD_ variable of environ
// ("NAME=value" pairs) that is no flag of any command of root's, nor one of
// envNotFlags: containers are configured by these variables alone, and a
// misspelt one would be ignored in silence. A flag of another command is
// no mistake (a fleet's containers share their variables). Values are
// never shown: some are secrets.
func unknownEnv(root *cobra.Command, environ []string) []string {
	known := slices.Clone(envNotFlags)
	walk(root, func(c *cobra.Command) {
		for _, f := range flagNames(c.Flags(), c.PersistentFlags()) {
			known = append(known, envName(f))
		}
	})
	slices.Sort(known)
	known = slices.Compact(known)
	var warnings []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "IMAPLOAD_") || slices.Contains(known, name) || hasAnyPrefix(name, envNotFlagPrefixes) {
			continue
		}
		w := name + ": no such setting (a setting is IMAPLOAD_ and a flag's name, as IMAPLOAD_SESSIONS for --sessions)"
		if near := closest(name, known); len(near) > 0 {
			w = name + ": no such setting; did you mean " + strings.Join(near, " or ") + "?"
		}
		warnings = append(warnings, w)
	}
	slices.Sort(warnings)
	return warnings
}

// walk calls f on c and every command below it.
func walk(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, sub := range c.Commands() {
		walk(sub, f)
	}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(s, p) })
}

// logger returns the process logger: text on cmd's stderr at --log-level.
func (g *globalFlags) logger(cmd *cobra.Command) *slog.Logger {
	return newLogger(cmd.ErrOrStderr(), g.LogLevel)
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

// profiled wraps run: with --cpuprofile, the CPU profile covers run and is
// written out when it returns, whether it failed or not.
func (g *globalFlags) profiled(run func(*cobra.Command, []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		stop, err := startProfile(g.CPUProfile)
		if err != nil {
			return err
		}
		defer stop()
		return run(cmd, args)
	}
}

// startProfile starts CPU profiling into path ("" is none) and returns the
// function that stops it and closes the file.
func startProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
