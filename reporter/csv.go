package reporter

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/imapload/imapload/messages"
)

// csvHeader is the first row of RenderCSV. Rates are commands/s; latencies
// are response times in milliseconds; errors counts the phase's failed
// commands; saturated is the step's GeneratorSaturated.
var csvHeader = []string{"run", "step", "target_rate", "delivered_rate", "ratio", "phase", "count",
	"p50", "p90", "p99", "p999", "max", "ci_p99_low", "ci_p99_high", "errors", "saturated"}

// RenderCSV writes r as CSV, one row per step and phase in step order, phases
// in session order. A step without phases still gets one row, with an empty
// phase. Numbers are written in full (shortest exact decimal form).
func RenderCSV(w io.Writer, r messages.RunReport) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return fmt.Errorf("reporter: render CSV: %w", err)
	}
	for i := range r.Steps {
		for _, row := range csvRows(r.Run, &r.Steps[i]) {
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

func csvRows(run string, s *messages.StepResult) [][]string {
	head := []string{run, strconv.Itoa(s.Step), num(s.TargetRate), num(s.DeliveredRate), num(s.Ratio)}
	tail := strconv.FormatBool(s.GeneratorSaturated)
	names := phaseNames(s.Phases)
	if len(names) == 0 {
		return [][]string{append(head, "", "0", "", "", "", "", "", "", "", "0", tail)}
	}
	rows := make([][]string, 0, len(names))
	for _, name := range names {
		p := s.Phases[name]
		row := append(append([]string(nil), head...), name, strconv.FormatUint(p.Count, 10),
			num(p.P50), num(p.P90), num(p.P99), num(p.P999), num(p.Max), num(p.CI.P99[0]), num(p.CI.P99[1]),
			strconv.FormatUint(failed(p), 10), tail)
		rows = append(rows, row)
	}
	return rows
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
