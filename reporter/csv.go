package reporter

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/imapload/imapload/messages"
)

// csvHeader is the first row of RenderCSV. Rates are commands/s; latencies
// are response times in milliseconds, a percentile that is only a lower bound
// (its rank falls among commands never sent) written ">412"; ci_p99_high is
// empty when the interval has no upper bound (too few samples, or never sent); errors counts
// the phase's failed commands; saturated is the step's GeneratorSaturated;
// verdict is held, below or inconclusive; reasons are an inconclusive step's
// reasons, "code: detail (remedy: …)", separated by " | ".
var csvHeader = []string{"run", "step", "target_rate", "delivered_rate", "ratio", "phase", "count",
	"p50", "p90", "p99", "p999", "max", "ci_p99_low", "ci_p99_high", "errors", "saturated", "verdict", "reasons",
	"session_rate", "target_session_rate", "script"}

// RenderCSV writes r as CSV, one row per step and phase in step order, phases
// in session order. A step without phases still gets one row, with an empty
// phase. Numbers are written in full (shortest exact decimal form).
func RenderCSV(w io.Writer, r messages.RunReport) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return fmt.Errorf("reporter: render CSV: %w", err)
	}
	for i := range r.Steps {
		for _, row := range csvRows(r.Run, &r.Steps[i], r.Threshold) {
			if err := cw.Write(row); err != nil {
				return fmt.Errorf("reporter: render CSV: %w", err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("reporter: render CSV: %w", err)
	}
	return nil
}

func csvRows(run string, s *messages.StepResult, threshold float64) [][]string {
	head := []string{run, strconv.Itoa(s.Step), num(s.TargetRate), num(s.DeliveredRate), num(s.Ratio)}
	tail := []string{strconv.FormatBool(s.GeneratorSaturated), stepVerdict(s, threshold), csvReasons(s),
		num(s.SessionRate), num(s.TargetSessionRate), s.Script}
	names := phaseNames(s.Phases)
	if len(names) == 0 {
		return [][]string{slices.Concat(head, []string{"", "0", "", "", "", "", "", "", "", "0"}, tail)}
	}
	rows := make([][]string, 0, len(names))
	for _, name := range names {
		rows = append(rows, slices.Concat(head, csvPhase(name, s.Phases[name]), tail))
	}
	return rows
}

// csvPhase is the phase's cells, from phase to errors.
func csvPhase(name string, p messages.PhaseResult) []string {
	high := num(p.CI.P99[1])
	if p.CI.P99.Open() || listed(p.TooFew, nameP99) {
		high = ""
	}
	return []string{name, strconv.FormatUint(p.Count, 10),
		csvPct(p, nameP50, p.P50), csvPct(p, nameP90, p.P90), csvPct(p, nameP99, p.P99), csvPct(p, nameP999, p.P999), num(p.Max),
		num(p.CI.P99[0]), high, strconv.FormatUint(failed(p), 10)}
}

// csvPct writes a percentile, prefixed with ">" when it is only a lower
// bound, empty when the sample cannot resolve its rank.
func csvPct(p messages.PhaseResult, name string, v float64) string {
	switch {
	case listed(p.Above, name):
		return ">" + num(v)
	case listed(p.Unresolved, name):
		return ""
	}
	return num(v)
}

func csvReasons(s *messages.StepResult) string {
	if !isInconclusive(s) {
		return ""
	}
	rs := stepReasons(s)
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = reasonText(r)
	}
	return strings.Join(parts, " | ")
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
