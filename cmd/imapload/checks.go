package main

import (
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"strconv"
	"time"
)

// A flag's value is checked before the command does anything: a run that
// would fail late (a read-only --out after the whole ramp) or measure
// nonsense (--threshold 2, --sessions 0) is refused at once, as a usage
// error that says what is wanted. Each config's validate (config.go) checks
// its own fields with the rules below.

// numericRule is a closed range [min, max] (max 0: none), open at min when
// openMin, with an excluded closed gap when gap is set.
type numericRule struct {
	min, max float64
	openMin  bool
	gap      [2]float64
}

// atLeast is the rule of a count or a size: ≥ min.
func atLeast(min float64) numericRule { return numericRule{min: min} }

// between is the rule of a fraction or a bounded count: [min, max].
func between(min, max float64) numericRule { return numericRule{min: min, max: max} }

// thresholdRule is the rule of a delivered/target ratio: (0, 1].
func thresholdRule() numericRule { return numericRule{min: 0, max: 1, openMin: true} }

// bcryptRule is the rule of a bcrypt cost: 0 (plain passwords) or 4–31,
// since bcrypt replaces 1–3 by its default.
func bcryptRule() numericRule { return numericRule{min: 0, max: 31, gap: [2]float64{1, 3}} }

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

// checkInt checks v, the value of the int flag --name, against r.
func checkInt(name string, v int, r numericRule) error {
	return checkNumber(name, strconv.Itoa(v), float64(v), r)
}

// checkFloat checks v, the value of the float flag --name, against r.
func checkFloat(name string, v float64, r numericRule) error {
	return checkNumber(name, strconv.FormatFloat(v, 'g', -1, 64), v, r)
}

// checkNumber names the flag and its value as given (shown) when v breaks r.
func checkNumber(name, shown string, v float64, r numericRule) error {
	if err := r.check(v); err != nil {
		return fmt.Errorf("--%s %s: %w", name, shown, err)
	}
	return nil
}

// checkDuration refuses a negative duration; the flags whose -1 means "the
// default" (--warmup, --stagger) are checked by the step command's
// validation instead.
func checkDuration(name string, d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("--%s %s: want a duration ≥ 0", name, d)
	}
	return nil
}

// checkIMAP checks the address a producer cannot do without.
func checkIMAP(addr string) error {
	if addr == "" {
		return errors.New("--imap is required: the IMAP server's host:port, e.g. --imap mail.example.net:993 --tls (or IMAPLOAD_IMAP)")
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("--imap %q: want host:port, e.g. mail.example.net:993", addr)
	}
	return nil
}

// checkOut makes sure --out is a folder this process can write to, now
// rather than after the whole run. The folder is created if missing (the
// report would create it anyway).
func checkOut(dir string) error {
	if dir == "" {
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
