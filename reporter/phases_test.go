package reporter

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
)

// clientReport is singleReport with every phase, the client commands
// included, and integrity checks of which one failed.
func clientReport() messages.RunReport {
	r := singleReport()
	s := &r.Steps[0]
	for _, p := range messages.Phases() {
		s.Phases[p.String()] = phaseResult(100, 0, 1, 5)
	}
	s.Checks = messages.Checks{Run: 25, Failed: 1}
	return r
}

// TestClientPhasesRendered: the client commands' phases appear in the
// table, the CSV and the HTML in session order (dial and login first,
// logout last), with a latency panel each, and the integrity checks are
// stated under the step.
func TestClientPhasesRendered(t *testing.T) {
	r := clientReport()
	var table, csv, html bytes.Buffer
	for _, c := range []struct {
		name   string
		render func(io.Writer, messages.RunReport) error
		out    *bytes.Buffer
	}{{"RenderTable", RenderTable, &table}, {"RenderCSV", RenderCSV, &csv}, {"RenderHTML", RenderHTML, &html}} {
		if err := c.render(c.out, r); err != nil {
			t.Fatalf("%s() error = %v", c.name, err)
		}
	}
	for name, out := range map[string]string{"table": table.String(), "CSV": csv.String(), "HTML": html.String()} {
		checkOrder(t, name, out)
	}
	for name, out := range map[string]string{"table": table.String(), "HTML": html.String()} {
		if !strings.Contains(out, "integrity checks: 25 run, 1 failed") {
			t.Errorf("%s does not state the integrity checks:\n%s", name, out)
		}
	}
	fig, err := PlotLatency(r)
	if err != nil {
		t.Fatalf("PlotLatency() error = %v", err)
	}
	panels := 0
	for _, row := range fig.Panels {
		for _, p := range row {
			if p != nil {
				panels++
			}
		}
	}
	if panels != messages.NumPhases {
		t.Errorf("PlotLatency() has %d panels, want one per phase, %d", panels, messages.NumPhases)
	}
}

// checkOrder fails unless every phase name appears in out, in session order.
func checkOrder(t *testing.T, name, out string) {
	t.Helper()
	at := -1
	for _, p := range messages.Phases() {
		i := strings.Index(out[at+1:], p.String())
		if i < 0 {
			t.Errorf("%s: phase %q missing or out of session order:\n%s", name, p, out)
			return
		}
		at += 1 + i
	}
}

// TestChecksNote: what the table says of a step's integrity checks.
func TestChecksNote(t *testing.T) {
	tests := []struct {
		name     string
		checks   messages.Checks
		disabled string
		want     string
	}{
		{name: "none ran", want: ""},
		{name: "all passed", checks: messages.Checks{Run: 12}, want: "integrity checks: 12 run, 0 failed"},
		{name: "disabled", checks: messages.Checks{Unaddressable: 40}, disabled: "checks disabled: server has no UIDPLUS",
			want: "integrity checks: 0 run, 0 failed; checks disabled: server has no UIDPLUS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &messages.StepResult{Checks: tt.checks, ChecksDisabled: tt.disabled}
			if got := checksNote(s); got != tt.want {
				t.Errorf("checksNote(%+v, %q) = %q, want %q", tt.checks, tt.disabled, got, tt.want)
			}
		})
	}
}
