package main

import (
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// A flag's value is checked before the command does anything: a run that
// would fail late (a read-only --out after the whole ramp) or measure
// nonsense (--threshold 2, --sessions 0) is refused at once, as a usage
// error that says what is wanted.

// numericRules bound the numeric flags, by name; "command/flag" overrides
// the rule of a name that means something else in one command.
var numericRules = map[string]numericRule{
	"users": {min: 1}, "sessions": {min: 1}, "sessions-per-account": {min: 1}, "accounts-count": {min: 1},
	"max-steps": {min: 1}, "demo/producers": {min: 1}, "step/producers": {min: 0},
	"workers": {min: 0}, "queue": {min: 0}, "reservoir": {min: 0}, "procs": {min: 0}, "max-messages": {min: 0},
	"after-knee": {min: 0}, "refine": {min: 0}, "replicas": {min: 1, max: 5},
	"slow-fraction": {min: 0, max: 1}, "drop-fraction": {min: 0, max: 1}, "no-fraction": {min: 0, max: 1},
	"threshold":   {min: 0, max: 1, openMin: true},
	"bcrypt-cost": {min: 0, max: 31, gap: [2]float64{1, 3}},
}

// durationsMayBeNegative are duration flags whose -1 means "the default"
// (they are checked by the step command's validation).
var durationsMayBeNegative = map[string]bool{"warmup": true, "stagger": true}

// numericRule is a closed range [min, max] (max 0: none), open at min when
// openMin, with an excluded closed gap when gap is set.
type numericRule struct {
	min, max float64
	openMin  bool
	gap      [2]float64
}

func (r numericRule) check(v float64) error {
	switch {
	case math.IsNaN(v) || (r.openMin && v <= r.min) || v < r.min:
		return fmt.Errorf("want %s", r)
	case r.max > 0 && v > r.max:
		return fmt.Errorf("want %s", r)
	case r.gap[1] > 0 && v >= r.gap[0] && v <= r.gap[1]:
		return fmt.Errorf("want %s", r)
	}
	return nil
}

func (r numericRule) String() string {
	lo := "≥ " + num(r.min)
	if r.openMin {
		lo = "> " + num(r.min)
	}
	s := lo
	if r.max > 0 {
		s += " and ≤ " + num(r.max)
	}
	if r.gap[1] > 0 {
		s += ", not " + num(r.gap[0]) + "–" + num(r.gap[1])
	}
	return s
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// checkFlags checks every flag of cmd that has a rule, and the addresses and
// folders it names; it does no network I/O.
func checkFlags(cmd *cobra.Command) error {
	var errs []error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err := checkFlag(cmd.Name(), f); err != nil {
			errs = append(errs, err)
		}
	})
	errs = append(errs, checkRequired(cmd), checkOut(cmd))
	return usage(errors.Join(errs...))
}

func checkFlag(command string, f *pflag.Flag) error {
	switch f.Value.Type() {
	case "int", "float64":
		rule, ok := numericRules[command+"/"+f.Name]
		if !ok {
			rule, ok = numericRules[f.Name]
		}
		v, err := strconv.ParseFloat(f.Value.String(), 64)
		if ok && err == nil {
			if err := rule.check(v); err != nil {
				return fmt.Errorf("--%s %s: %w", f.Name, f.Value, err)
			}
		}
	case "duration":
		if strings.HasPrefix(f.Value.String(), "-") && !durationsMayBeNegative[f.Name] {
			return fmt.Errorf("--%s %s: want a duration ≥ 0", f.Name, f.Value)
		}
	}
	return nil
}

// checkRequired checks the address a producer cannot do without.
func checkRequired(cmd *cobra.Command) error {
	f := cmd.Flags().Lookup("imap")
	if f == nil {
		return nil
	}
	if f.Value.String() == "" {
		return errors.New("--imap is required: the IMAP server's host:port, e.g. --imap mail.example.net:993 --tls (or IMAPLOAD_IMAP)")
	}
	if _, _, err := net.SplitHostPort(f.Value.String()); err != nil {
		return fmt.Errorf("--imap %q: want host:port, e.g. mail.example.net:993", f.Value)
	}
	return nil
}

// checkOut makes sure --out is a folder this process can write to, now
// rather than after the whole run. The folder is created if missing (the
// report would create it anyway).
func checkOut(cmd *cobra.Command) error {
	dir := flagString(cmd, "out")
	if dir == "" || cmd.Flags().Lookup("out") == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("--out %s: cannot create the report folder: %w", dir, err)
	}
	probe, err := os.CreateTemp(dir, ".imapload-probe-*")
	if err != nil {
		return fmt.Errorf("--out %s: cannot write report files there: %w", dir, err)
	}
	probe.Close()
	return os.Remove(probe.Name())
}
