package messages

import (
	"errors"
	"fmt"
	"strings"
)

// MaxScriptCommands bounds the commands of one session script.
const MaxScriptCommands = 64

// Script is a session of a fixed shape: the scheduled commands one session
// sends, in order, after its dial and LOGIN. A step with a script offers
// whole sessions instead of single commands drawn from a mix: each session
// dials, logs in, sends the script's commands one after another (each when
// the previous one has answered, as a client does), and ends; a script that
// does not end with LOGOUT closes the connection without one, as a client
// that is switched off does.
type Script []Phase

// ParseScript reads a script written as phase names separated by spaces or
// commas, in any case, e.g. "LOGIN SELECT FETCH LOGOUT". The session set-up
// (DIAL, LOGIN) may be written at the start, where it always happens; it is
// not part of the returned script. At least one scheduled command is needed.
// "imaptest" names ImaptestCycle.
func ParseScript(s string) (Script, error) {
	if strings.EqualFold(strings.TrimSpace(s), "imaptest") {
		s = ImaptestCycle
	}
	fields := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == ' ' || r == ',' || r == '\t' })
	var errs []error
	var sc Script
	setup := true // still in the optional dial/login prefix
	for _, f := range fields {
		p, err := ParsePhase(f)
		switch {
		case err != nil:
			errs = append(errs, err)
		case !p.Scheduled() && setup:
			continue
		case !p.Scheduled():
			errs = append(errs, fmt.Errorf("%q is session set-up: it may only open the script", f))
		default:
			setup = false
			sc = append(sc, p)
		}
	}
	switch {
	case len(errs) > 0:
	case len(sc) == 0:
		errs = append(errs, errors.New("no scheduled command (e.g. \"login select fetch logout\")"))
	case len(sc) > MaxScriptCommands:
		errs = append(errs, fmt.Errorf("%d commands, at most %d", len(sc), MaxScriptCommands))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return sc, nil
}

// String writes the script as ParseScript reads it, with the implied LOGIN.
func (sc Script) String() string {
	var b strings.Builder
	b.WriteString("login")
	for _, p := range sc {
		b.WriteByte(' ')
		b.WriteString(p.String())
	}
	return b.String()
}

// ScriptOf returns the step's script, nil for a step of single commands
// drawn from a mix. The command must be valid.
func (c StepCommand) ScriptOf() Script {
	if c.Script == "" {
		return nil
	}
	sc, _ := ParseScript(c.Script)
	return sc
}

// normalize fills in what c's profile gives (see Profile), then Rate from
// SessionRate: a step offered in sessions per second offers SessionRate × its
// script's commands per second.
func (c *StepCommand) normalize() {
	c.applyProfile()
	if c.SessionRate > 0 && c.Rate == 0 {
		if sc, err := ParseScript(c.Script); err == nil {
			c.Rate = c.SessionRate * float64(len(sc))
		}
	}
}

// Normalized returns c with its profile applied and Rate filled in from
// SessionRate (see SessionRate); ParseStepCommand does this itself.
func (c StepCommand) Normalized() StepCommand {
	c.normalize()
	return c
}

// checkScript adds the problems of c's script and session rate.
func (c StepCommand) checkScript(bad func(string, ...any)) {
	c.applyProfile()
	var sc Script
	if c.Script != "" {
		var err error
		if sc, err = ParseScript(c.Script); err != nil {
			bad("script: %v", strings.ReplaceAll(err.Error(), "\n", "; "))
		}
		if c.Mix != nil {
			bad("script and mix: give one (a script fixes each session's commands; a mix draws them)")
		}
	}
	switch {
	case c.SessionRate == 0:
	case !(c.SessionRate > 0) || c.SessionRate > MaxRate:
		bad("session_rate: %v sessions/s, want > 0 and ≤ %g", c.SessionRate, float64(MaxRate))
	case c.Script == "":
		bad("session_rate: needs a script (e.g. \"script\":\"login select fetch logout\")")
	case sc != nil && c.Rate != 0 && c.Rate != c.SessionRate*float64(len(sc)):
		bad("rate and session_rate: give one (rate is then session_rate × the script's %d commands)", len(sc))
	}
}
