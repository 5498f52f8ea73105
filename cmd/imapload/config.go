package main

import (
	"errors"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Flags are bound to the fields of typed configs, one per command, in one
// place: a config's add method. Groups that several commands share
// (natsConfig, producerFlags, rampFlags, shapeFlags, imapServerFlags) are
// structs with their own add and checks, embedded in the commands' configs.
// Nothing reads a flag back by name: the environment (applyEnv) and the
// secret files (readSecretFiles) set flags through the FlagSet before the
// command runs, which sets the bound fields.

// A config is one command's flags, bound to the fields of a struct: add
// declares them on fs, validate refuses impossible values (it does no
// network I/O).
type config interface {
	add(fs *pflag.FlagSet)
	validate() error
}

// bind declares c's flags on cmd and checks them before cmd runs, once the
// environment and the secret files have completed them (the root's
// PersistentPreRunE).
func bind(cmd *cobra.Command, c config) *cobra.Command {
	c.add(cmd.Flags())
	cmd.PreRunE = func(*cobra.Command, []string) error { return usage(c.validate()) }
	return cmd
}

// flagErrors joins the errors of single flags in the order of the flags'
// names, as --help lists them; nil ones are skipped.
func flagErrors(errs ...[]error) error {
	all := slices.DeleteFunc(slices.Concat(errs...), func(err error) bool { return err == nil })
	slices.SortFunc(all, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(all...)
}
