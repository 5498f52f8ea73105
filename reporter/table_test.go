package reporter

import (
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/imapload/imapload/messages"
)

// tableCases are the golden reports and one where two steps share a reason.
func tableCases() map[string]messages.RunReport {
	out := map[string]messages.RunReport{"twice": twiceReport(), "overload": overloadReport()}
	for _, c := range goldenCases {
		out[c.name] = c.report()
	}
	out["empty"] = emptyReport()
	return out
}

// twiceReport has steps 2 and 3 inconclusive for the same reason, as a ramp
// run by hand may: its remedy is the same text under both.
func twiceReport() messages.RunReport {
	reason := func(p string) messages.Reason {
		return messages.Reason{Code: messages.ReasonHostOverloaded, Remedy: remedyHost, Detail: "fell behind its schedule: " + p + " waited for a CPU"}
	}
	steps := []messages.StepResult{
		simpleStep(1, 500, 499, messages.VerdictHeld),
		simpleStep(2, 1000, 995, messages.VerdictInconclusive, reason("p1")),
		simpleStep(3, 1500, 1480, messages.VerdictInconclusive, reason("p2")),
	}
	r := handReport("twice", steps, nil)
	r.LastHeld = &messages.StepRef{Step: 1, Rate: 500, DeliveredRate: 499, Ratio: 0.998}
	r.Verdict = messages.RunInconclusive
	first := reason("p1")
	first.Detail = "step 2 at 1000/s: " + first.Detail
	r.Reasons = []messages.Reason{first}
	return r
}

// overloadReport is a knee far past the capacity of a long step: counts of
// six digits, P99s of seconds among commands never sent (bounds below only,
// or a closed interval), and an interval open above because of them.
func overloadReport() messages.RunReport {
	s := simpleStep(1, 9000, 5000, messages.VerdictBelow)
	big := phaseResult(123456, 1234, 8000, 12345)
	s.Phases = map[string]messages.PhaseResult{
		"fetch":  above(big, 0.28, "p99", "p999"),
		"select": above(big, 0.03, "p99"),
		"store":  above(big, 0.004, "p999"),
	}
	fetch, store := s.Phases["fetch"], s.Phases["store"]
	fetch.CI.P99 = messages.Interval{12345, math.Inf(1)}
	store.CI.P99 = messages.Interval{12000, math.Inf(1)}
	s.Phases["fetch"], s.Phases["store"] = fetch, store
	r := handReport("overload", []messages.StepResult{s}, &messages.Knee{Step: 1, Rate: 9000, DeliveredRate: 5000, Ratio: 0.56, Threshold: DefaultThreshold})
	r.Verdict = messages.RunKnee
	return r
}

// TestRenderTableWidth: every line of the default table fits TableWidth
// columns, with or without the step lines above it, on every golden report
// (a demo on a busy machine among them); the wide table is wider.
func TestRenderTableWidth(t *testing.T) {
	for name, r := range tableCases() {
		for _, above := range []bool{false, true} {
			var b strings.Builder
			if err := WriteTable(&b, r, &TableOptions{StepLinesAbove: above}); err != nil {
				t.Fatalf("WriteTable(%s) error = %v", name, err)
			}
			for i, l := range strings.Split(b.String(), "\n") {
				if n := utf8.RuneCountInString(l); n > TableWidth {
					t.Errorf("WriteTable(%s, StepLinesAbove %v) line %d is %d columns, want ≤ %d:\n%s", name, above, i+1, n, TableWidth, l)
				}
			}
		}
	}
	var wide strings.Builder
	if err := RenderWideTable(&wide, oldReport()); err != nil {
		t.Fatal(err)
	}
	if n := longest(wide.String()); n <= TableWidth {
		t.Errorf("RenderWideTable() longest line %d columns, want the wide one (> %d)", n, TableWidth)
	}
}

func longest(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		n = max(n, utf8.RuneCountInString(l))
	}
	return n
}

// TestRenderWideTableColumns: the wide table keeps every column the default
// one drops or merges, and the figures in them.
func TestRenderWideTableColumns(t *testing.T) {
	var narrow, wide strings.Builder
	r := oldReport()
	if err := RenderTable(&narrow, r); err != nil {
		t.Fatal(err)
	}
	if err := RenderWideTable(&wide, r); err != nil {
		t.Fatal(err)
	}
	for _, col := range []string{"MARK", "SESSIONS/s", "P99 95% CI", "P99.9 ms"} {
		if !strings.Contains(wide.String(), col) {
			t.Errorf("RenderWideTable() lacks the column %q", col)
		}
		if strings.Contains(narrow.String(), col) {
			t.Errorf("RenderTable() has the column %q, which only the wide table has", col)
		}
	}
	// Step 4's fetch: P99.9 137 ms only in the wide table; its P99 and interval in both.
	for _, want := range []string{"76.0 [72.2..80.6]", "below (KNEE)"} {
		if !strings.Contains(narrow.String(), want) {
			t.Errorf("RenderTable() lacks %q:\n%s", want, narrow.String())
		}
	}
	if !strings.Contains(wide.String(), "76.0  72.2..80.6       137") {
		t.Errorf("RenderWideTable() lacks step 4's fetch P99, interval and P99.9:\n%s", wide.String())
	}
}

// unfolded joins s's lines and spaces, so that text folded by the table
// reads as one line.
func unfolded(s string) string { return strings.Join(strings.Fields(s), " ") }

// remedies lists the distinct remedies of r's reasons and its steps'.
func remedies(r messages.RunReport) []string {
	var out []string
	add := func(rs []messages.Reason) {
		for _, x := range rs {
			if x.Remedy != "" && !strings.Contains(strings.Join(out, "\n"), x.Remedy) {
				out = append(out, x.Remedy)
			}
		}
	}
	add(r.Reasons)
	for i := range r.Steps {
		add(stepReasons(&r.Steps[i]))
	}
	return out
}

// TestRemediesOnce: each remedy is printed once in the default table, in
// the wide table, and over a ramp's step lines followed by its table; after
// that, it is referred back to.
func TestRemediesOnce(t *testing.T) {
	for name, r := range tableCases() {
		var lines strings.Builder
		for i := range r.Steps {
			lines.WriteString(StepLine(r.Steps[i], r.Steps[:i]) + "\n")
		}
		outputs := map[string]string{}
		for what, o := range map[string]*TableOptions{"default": nil, "wide": {Wide: true}, "after step lines": {StepLinesAbove: true}} {
			var b strings.Builder
			if err := WriteTable(&b, r, o); err != nil {
				t.Fatal(err)
			}
			outputs[what] = b.String()
		}
		outputs["after step lines"] = lines.String() + outputs["after step lines"]
		for what, out := range outputs {
			for _, remedy := range remedies(r) {
				if n := strings.Count(unfolded(out), remedy); n != 1 {
					t.Errorf("%s, %s: remedy %q printed %d times, want once:\n%s", name, what, remedy, n, out)
				}
			}
		}
	}
}

// TestRemedyReferredBack: where a remedy was printed already, the text says
// where.
func TestRemedyReferredBack(t *testing.T) {
	r := twiceReport()
	if got, want := StepLine(r.Steps[2], r.Steps[:2]), "\n    what to do: as for step 2 above"; !strings.HasSuffix(got, want) {
		t.Errorf("StepLine(step 3, after step 2) = %q, want it to end with %q", got, want)
	}
	var b strings.Builder
	if err := WriteTable(&b, r, &TableOptions{StepLinesAbove: true}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"inconclusive: host_overloaded: fell behind its schedule: p1 waited for a CPU (what to do: as above)",
		"inconclusive: host_overloaded: fell behind its schedule: p2 waited for a CPU (what to do: as for step 2 above)",
		"- host_overloaded at step 2 (under its row above)",
		"inconclusive: step 2 (host_overloaded), step 3 (host_overloaded): never quoted as evidence",
	} {
		if !strings.Contains(unfolded(b.String()), want) {
			t.Errorf("WriteTable(StepLinesAbove) lacks %q:\n%s", want, b.String())
		}
	}
}

// TestStepLine: a step's figures, verdict, and each reason with what to do
// on the line after it.
func TestStepLine(t *testing.T) {
	r := twiceReport().Steps[1]
	r.TargetSessionRate, r.SessionRate = 80, 79.6
	want := "step 2 done: target 1000/s, delivered 995.0/s (100%): INCONCLUSIVE; sessions 79.6/s of 80.0/s\n" +
		"    host_overloaded: fell behind its schedule: p1 waited for a CPU\n" +
		"    what to do: " + remedyHost
	if got := StepLine(r, nil); got != want {
		t.Errorf("StepLine() =\n%s\nwant\n%s", got, want)
	}
}

// TestTableNamesSaturatedProducers: a saturated result that predates
// verdicts is inconclusive, naming the producers that fell behind from the
// per-producer breakdown.
func TestTableNamesSaturatedProducers(t *testing.T) {
	r := Build("old", withSaturatedBreakdown(kneeSteps([]st{{step: 1, ratio: 1, saturated: true}})), 0, fixedNow)
	r.Steps[0].Verdict, r.Steps[0].Reasons = "", nil // as an older aggregator published it
	var b strings.Builder
	if err := RenderWideTable(&b, r); err != nil {
		t.Fatal(err)
	}
	if want := "inconclusive: generator_saturated: p7, p9 fell behind its schedule"; !strings.Contains(b.String(), want) {
		t.Errorf("RenderWideTable() lacks %q:\n%s", want, b.String())
	}
}

func TestFold(t *testing.T) {
	tests := []struct {
		name, text string
		width      int
		want       []string
	}{
		{name: "unlimited", text: "a b  c", width: 0, want: []string{"> a b  c"}},
		{name: "fits", text: "aa bb", width: 10, want: []string{"> aa bb"}},
		{name: "folds at spaces", text: "aa bb cc dd", width: 8, want: []string{"> aa bb", "  cc dd"}},
		{name: "cuts a word longer than a line", text: "abcdefghij k", width: 6, want: []string{"> abcd", "  efgh", "  ij k"}},
		{name: "runes, not bytes", text: "≥≥≥ ×××", width: 5, want: []string{"> ≥≥≥", "  ×××"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fold("> ", "  ", tt.text, tt.width)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("fold(%q, %d) = %q, want %q", tt.text, tt.width, got, tt.want)
			}
			for _, l := range got {
				if tt.width > 0 && utf8.RuneCountInString(l) > tt.width {
					t.Errorf("fold(%q, %d) line %q is wider than %d", tt.text, tt.width, l, tt.width)
				}
			}
		})
	}
}

// TestUnresolvedReadsTooFew: a percentile whose rank the sample cannot
// resolve (P99.9 of 30 values) reads "too few" in the table and is left
// empty in the CSV, never as a figure below the maximum.
func TestUnresolvedReadsTooFew(t *testing.T) {
	p := messages.PhaseResult{Count: 30, Percentiles: messages.Percentiles{P50: 0.4, P99: 0.614, P999: 0.614, Max: 0.614},
		TooFew: []string{"p99", "p999"}, Unresolved: []string{"p99", "p999"}, CI: messages.Intervals{P999: messages.Interval{0.5, math.Inf(1)}}}
	for _, c := range []struct{ name, got, want string }{
		{"pctText(p999)", pctText(p, nameP999, p.P999), "too few"},
		{"pctShort(p99)", pctShort(p, nameP99, p.P99), "too few"},
		{"p99Short", p99Short(messages.PhaseResult{Count: 30, Unresolved: []string{"p99"}, TooFew: []string{"p99"}, CI: messages.Intervals{P99: messages.Interval{1.52, math.Inf(1)}}}), "too few (≥ " + ms(1.52) + ")"},
		{"pctText(p50)", pctText(p, nameP50, p.P50), ms(0.4)},
		{"csvPct(p999)", csvPct(p, nameP999, p.P999), ""},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
}
