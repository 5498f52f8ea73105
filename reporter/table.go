package reporter

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// TableWidth is the most columns a line of RenderTable takes: the table
// fits a terminal of 120 columns without wrapping.
const TableWidth = 120

// TableOptions choose how WriteTable lays a report out. A nil
// *TableOptions means the defaults: the table that fits TableWidth.
type TableOptions struct {
	// Wide keeps every column (sessions/s and P99.9 too, the mark in its own
	// column) and writes each note, reason and finding on one line however
	// long: the table of report.txt, for reading in a file or with grep.
	Wide bool
	// StepLinesAbove says the output already holds the StepLine of each
	// of the report's steps, in step order (a ramp prints them as the
	// steps finish): a remedy they printed is referred back to, not
	// printed again.
	StepLinesAbove bool
}

// RenderTable writes r as a plain-text table for a terminal, each line at
// most TableWidth columns: one row per step and phase (count, errors,
// response-time P50 and P99 with its 95% interval), each step's verdict with
// the knee and last held step marked, the reasons of inconclusive steps and
// the top error kinds under each step, then the run's verdict, the knee, the
// last step that held, the thresholds, the top errors of a failing run and
// the findings. Each remedy is printed once, then referred back to. Fixed
// columns, no colours; RenderWideTable has every column.
func RenderTable(w io.Writer, r messages.RunReport) error { return WriteTable(w, r, nil) }

// RenderWideTable writes r as RenderTable does, with every column (sessions
// per second, P99.9) and each note and finding on one line: report.txt.
func RenderWideTable(w io.Writer, r messages.RunReport) error {
	return WriteTable(w, r, &TableOptions{Wide: true})
}

// WriteTable writes r as a table laid out as o says (nil: RenderTable's).
func WriteTable(w io.Writer, r messages.RunReport, o *TableOptions) error {
	var opts TableOptions
	if o != nil {
		opts = *o
	}
	l := narrowLayout
	p := &page{width: TableWidth, told: told{}}
	if opts.Wide {
		l, p.width = wideLayout, 0
	}
	if opts.StepLinesAbove {
		for i := range r.Steps {
			p.told.stepLine(&r.Steps[i])
		}
	}
	p.para("", "    ", fmt.Sprintf("imapload run %s: %s, knee threshold %s, generated %s",
		r.Run, plural(len(r.Steps), "step"), ratio(r.Threshold), r.Generated.UTC().Format(time.RFC3339)))
	p.WriteString("\n")
	t := &textTable{header: l.header, left: l.left}
	for i := range r.Steps {
		addStep(t, p.told, l, &r.Steps[i], mark(r, r.Steps[i].Step), r.Threshold)
	}
	t.write(p)
	p.WriteString("\n")
	writeSummary(p, r)
	_, err := io.WriteString(w, p.String())
	return err
}

// layout is a table's columns: a step's (on its first phase row), then a
// phase's.
type layout struct {
	header   []string
	left     map[int]bool // text columns; numbers align right
	stepCols int
	head     func(s *messages.StepResult, mark string, threshold float64) []string
	phase    func(name string, p messages.PhaseResult) []string
	none     []string                              // the phase cells of a step without phases
	notes    func(s *messages.StepResult) []string // what the layout leaves out of its columns
}

// wideLayout has every column. Latencies are response times in milliseconds
// from the merged sketches; the interval is the 95% interval of the P99 from
// the count-weighted reservoirs.
var wideLayout = layout{
	header: []string{"STEP", "MARK", "VERDICT", "TARGET/s", "DELIVERED/s", "RATIO", "SESSIONS/s",
		"PHASE", "COUNT", "ERRORS", "P50 ms", "P99 ms", "P99 95% CI", "P99.9 ms"},
	left:     map[int]bool{1: true, 2: true, 7: true, 12: true},
	stepCols: 7,
	head: func(s *messages.StepResult, mark string, threshold float64) []string {
		return []string{strconv.Itoa(s.Step), mark, stepVerdict(s, threshold), rate(s.TargetRate), rate(s.DeliveredRate), ratio(s.Ratio), sessions(s)}
	},
	phase: func(name string, p messages.PhaseResult) []string {
		return []string{name, strconv.FormatUint(p.Count, 10), strconv.FormatUint(failed(p), 10),
			pctText(p, nameP50, p.P50), pctText(p, nameP99, p.P99), ciText(p, nameP99, p.CI.P99), pctText(p, nameP999, p.P999)}
	},
	none:  []string{"-", "0", "0", "-", "-", "-", "-"},
	notes: func(*messages.StepResult) []string { return nil },
}

// narrowLayout fits TableWidth: the mark goes with the verdict, the P99's
// interval in brackets beside it; the share of commands never sent (which
// makes a percentile a lower bound, "> 412") and the sessions/s of a script
// become notes, and P99.9 is left to the wide table.
var narrowLayout = layout{
	header: []string{"STEP", "VERDICT", "TARGET/s", "DELIVERED/s", "RATIO",
		"PHASE", "COUNT", "ERRORS", "P50 ms", "P99 ms [95% CI]"},
	left:     map[int]bool{1: true, 5: true, 9: true},
	stepCols: 5,
	head: func(s *messages.StepResult, mark string, threshold float64) []string {
		v := stepVerdict(s, threshold)
		if mark != "" {
			v += " (" + mark + ")"
		}
		return []string{strconv.Itoa(s.Step), v, rate(s.TargetRate), rate(s.DeliveredRate), ratio(s.Ratio)}
	},
	phase: func(name string, p messages.PhaseResult) []string {
		return []string{name, strconv.FormatUint(p.Count, 10), strconv.FormatUint(failed(p), 10), pctShort(p, nameP50, p.P50), p99Short(p)}
	},
	none:  []string{"-", "0", "0", "-", "-"},
	notes: narrowNotes,
}

// narrowNotes are what the narrow table's columns leave out: a script's
// sessions per second, and the phases whose percentiles are lower bounds
// because commands were never sent.
func narrowNotes(s *messages.StepResult) []string {
	var notes, unsent []string
	if s.TargetSessionRate > 0 {
		notes = append(notes, fmt.Sprintf("sessions: %s/s of %s/s", rate(s.SessionRate), rate(s.TargetSessionRate)))
	}
	for _, name := range phaseNames(s.Phases) {
		if p := s.Phases[name]; listed(p.Above, nameP50) || listed(p.Above, nameP99) { // the percentiles shown
			unsent = append(unsent, name+" "+share(p.NeverSent))
		}
	}
	if len(unsent) > 0 {
		notes = append(notes, "never sent: "+strings.Join(unsent, ", ")+" of the commands (so the figures marked > are lower bounds)")
	}
	return notes
}

// pctShort is pctText without the share never sent (a note says it):
// "> 412", "none served", "too few", or ms(v).
func pctShort(p messages.PhaseResult, name string, v float64) string {
	switch {
	case listed(p.Above, name) && p.Count == 0:
		return "none served"
	case listed(p.Above, name):
		return "> " + ms(v)
	case listed(p.Unresolved, name):
		return unresolvedText
	}
	return ms(v)
}

// p99Short is the P99 with its interval in brackets: "76.0 [72.2..80.6]",
// "0.900 [≥ 0.720 (too few samples)]"; a lower bound whose interval is open
// above it too is shown alone ("> 887").
func p99Short(p messages.PhaseResult) string {
	v := pctShort(p, nameP99, p.P99)
	if listed(p.Unresolved, nameP99) && !listed(p.Above, nameP99) { // its interval says too few as well
		if lo := p.CI.P99[0]; lo > 0 {
			return v + " (≥ " + ms(lo) + ")"
		}
		return v
	}
	ci := ciText(p, nameP99, p.CI.P99)
	if ci == "-" || listed(p.Above, nameP99) && (p.CI.P99.Open() || listed(p.TooFew, nameP99)) {
		return v
	}
	return v + " [" + strings.Replace(ci, "never sent above it", "never sent above", 1) + "]"
}

func mark(r messages.RunReport, step int) string {
	var marks []string
	if r.Knee != nil && r.Knee.Step == step {
		marks = append(marks, "KNEE")
	}
	if r.LastHeld != nil && r.LastHeld.Step == step {
		marks = append(marks, "last held")
	}
	for _, rc := range verdict.Rechecks(r.Steps, r.Threshold) {
		if rc.Step == step {
			marks = append(marks, "re-offer")
		}
	}
	return strings.Join(marks, ",")
}

// addStep adds a step's rows: the step's figures on its first phase row,
// then its notes.
func addStep(t *textTable, said told, l layout, s *messages.StepResult, mark string, threshold float64) {
	head := l.head(s, mark, threshold)
	names := phaseNames(s.Phases)
	if len(names) == 0 {
		t.row(append(head, l.none...))
	}
	for i, name := range names {
		if i > 0 {
			head = make([]string, l.stepCols)
		}
		t.row(append(head, l.phase(name, s.Phases[name])...))
	}
	for _, n := range append(l.notes(s), stepNotes(s, said)...) {
		t.note(n)
	}
}

// stepNotes say why a step is inconclusive (each remedy once), what its
// connections did, who is missing, its checks and its top errors.
func stepNotes(s *messages.StepResult, said told) []string {
	var notes []string
	if isInconclusive(s) {
		for _, rs := range stepReasons(s) {
			notes = append(notes, "inconclusive: "+said.reason(rs, s.Step))
		}
	}
	for _, c := range s.Caveats {
		notes = append(notes, "caveat: "+said.reason(c, s.Step))
	}
	if c := s.Connections; c != nil {
		notes = append(notes, connectionsText(c))
	}
	if d := s.Deliveries; d != nil {
		notes = append(notes, deliveriesText(d))
	}
	if s.Below != "" && (s.Connections != nil || s.Deliveries != nil) {
		notes = append(notes, "below on "+s.Below)
	}
	for _, n := range [][2]string{{"profile", s.Profile}, {"script", s.Script}, {"missing", strings.Join(s.Missing, ", ")}} {
		if n[1] != "" {
			notes = append(notes, n[0]+": "+n[1])
		}
	}
	if n := checksNote(s); n != "" {
		notes = append(notes, n)
	}
	if n := serverNote(s); n != "" {
		notes = append(notes, n)
	}
	if errs := sortedErrors(s.Errors); len(errs) > 0 {
		notes = append(notes, "errors: "+errorList(errs))
	}
	return notes
}

// sessions is the step's delivered sessions (logins) per second, and the
// offered ones of a step that runs a script.
func sessions(s *messages.StepResult) string {
	if s.TargetSessionRate > 0 {
		return rate(s.SessionRate) + " of " + rate(s.TargetSessionRate)
	}
	return rate(s.SessionRate)
}

// checksNote says what the step's integrity checks found, "" when none ran
// and nothing kept them from running: "integrity checks: 25 run, 0 failed".
func checksNote(s *messages.StepResult) string {
	c := s.Checks
	if c.Run == 0 && s.ChecksDisabled == "" {
		return ""
	}
	n := fmt.Sprintf("integrity checks: %d run, %d failed", c.Run, c.Failed)
	if s.ChecksDisabled != "" {
		n += "; " + s.ChecksDisabled
	}
	return n
}

// errorList names the top error kinds: `fetch "NO [SERVERBUG] …" x120`.
func errorList(errs []messages.ErrorGroup) string {
	parts := make([]string, 0, topErrors+1)
	for _, e := range errs[:min(topErrors, len(errs))] {
		parts = append(parts, fmt.Sprintf("%s %q x%d", e.Phase, clip(e.Kind, 60), e.Count))
	}
	if more := len(errs) - topErrors; more > 0 {
		parts = append(parts, "and "+plural(more, "more kind"))
	}
	return strings.Join(parts, "; ")
}

// connectionsText is a step's held connections, as a note under it.
func connectionsText(c *messages.ConnectionsResult) string {
	return fmt.Sprintf("connections: %d of %d held through the window (%d asked), %d at its end, %d dropped; set-ups %d, %d failed",
		c.Held, c.Offered, c.Target, c.HeldAtEnd, c.Dropped, c.SetupAttempted, c.SetupFailed)
}
