package reporter

import (
	"fmt"
	"io"
	"strings"

	"github.com/imapload/imapload/messages"
)

// Indents of the summary under the table: the verdict's reasons, and the
// lines a reason, finding, threshold or error folds onto.
const (
	reasonIndent = "           - "
	reasonHang   = "             "
	itemIndent   = "  - "
	itemHang     = "    "
	labelHang    = "           " // under the text after "verdict:   ", "knee:      "
)

// runVerdictWords say what each run verdict means.
var runVerdictWords = map[string]string{
	messages.RunKnee:         "knee (the server stopped keeping up)",
	messages.RunNoKnee:       "no knee (every valid step held)",
	messages.RunInconclusive: "inconclusive (what the server sustains could not be established)",
	messages.RunFailing:      "failing (the server did not answer correctly: most commands failed, or it refused one command)",
	messages.RunNoneHeld:     "none held (no rate offered was sustained, down to the lowest: no bracket)",
	"":                       "none yet (no step results)",
}

// writeSummary writes what the table adds up to: the run's verdict and its
// reasons, the knee, the last held step, the thresholds, the top errors of
// a failing run and the findings.
func writeSummary(p *page, r messages.RunReport) {
	writeVerdict(p, r)
	writeKnee(p, r)
	if h := r.LastHeld; h != nil {
		p.para("last held: ", labelHang, fmt.Sprintf("step %d at %s/s offered, %s/s delivered (ratio %s)",
			h.Step, rate(h.Rate), rate(h.DeliveredRate), ratio(h.Ratio)))
	} else {
		p.WriteString("last held: none\n")
	}
	if m := r.MostHeld; m != nil {
		p.para("most held: ", labelHang, fmt.Sprintf("step %d held %d IDLE connections (of %d asked) with %s/s intact (ratio %s)",
			m.Step, m.Connections, m.Target, rate(m.Rate), ratio(m.Ratio)))
	}
	if bad := inconclusiveWords(r.Steps); bad != "" {
		p.para("inconclusive: ", "              ", bad+": never quoted as evidence, nor the knee nor the last held step; why and what to do are under each")
	}
	writeThresholds(p, r.Thresholds)
	writeTopErrors(p, r.TopErrors)
	if len(r.Findings) > 0 {
		p.WriteString("\nfindings:\n")
	}
	for _, f := range r.Findings {
		p.para(itemIndent, itemHang, f)
	}
}

// inconclusiveWords names the inconclusive steps with their reason codes:
// "step 2 (generator_stalled), step 3 (rate_mismatch)", "" when none is.
func inconclusiveWords(steps []messages.StepResult) string {
	var parts []string
	for i := range steps {
		s := &steps[i]
		if !isInconclusive(s) {
			continue
		}
		why := "no reason given"
		if codes := reasonCodes([]*messages.StepResult{s}); len(codes) > 0 {
			why = strings.Join(codes, ", ")
		}
		parts = append(parts, fmt.Sprintf("step %d (%s)", s.Step, why))
	}
	return strings.Join(parts, ", ")
}

// writeVerdict writes the run's verdict and its reasons. A reason that is
// an inconclusive step's, already under the step's row, is named with its
// step; another is written whole, its remedy told once.
func writeVerdict(p *page, r messages.RunReport) {
	v := runVerdict(r)
	words, ok := runVerdictWords[v]
	if !ok {
		words = v
	}
	p.para("verdict:   ", labelHang, words)
	for _, rs := range r.Reasons {
		if step, ok := reasonOfStep(r.Steps, rs); ok {
			p.para(reasonIndent, reasonHang, fmt.Sprintf("%s at step %d (under its row above)", rs.Code, step))
			continue
		}
		p.para(reasonIndent, reasonHang, p.told.reason(rs, 0))
	}
}

// reasonOfStep finds the inconclusive step a run's reason was taken from
// (package verdict prefixes its detail with "step N at R/s: ").
func reasonOfStep(steps []messages.StepResult, rs messages.Reason) (int, bool) {
	for i := range steps {
		s := &steps[i]
		if !isInconclusive(s) || !strings.HasPrefix(rs.Detail, fmt.Sprintf("step %d ", s.Step)) {
			continue
		}
		for _, x := range stepReasons(s) {
			if x.Code == rs.Code && strings.HasSuffix(rs.Detail, ": "+x.Detail) {
				return s.Step, true
			}
		}
	}
	return 0, false
}

func writeKnee(p *page, r messages.RunReport) {
	var text string
	switch k := r.Knee; {
	case k != nil && k.Low > 0:
		text = fmt.Sprintf("between %s and %s/s: %s; step %d at %s/s offered fell below (%s/s delivered, ratio %s < %s)",
			rate(k.Low), rate(k.Rate), uncertainWords(k.Uncertain), k.Step, rate(k.Rate), rate(k.DeliveredRate), ratio(k.Ratio), ratio(k.Threshold))
	case k != nil && k.Connections > 0:
		text = fmt.Sprintf("step %d at %d held connections and %s/s offered: below on %s",
			k.Step, k.Connections, rate(k.Rate), k.Below)
	case k != nil:
		text = fmt.Sprintf("step %d at %s/s offered, %s/s delivered (ratio %s < %s)",
			k.Step, rate(k.Rate), rate(k.DeliveredRate), ratio(k.Ratio), ratio(k.Threshold))
	case len(r.Steps) == 0:
		text = "none yet (no step results)"
	case runVerdict(r) == messages.RunNoKnee:
		text = fmt.Sprintf("none (every valid step delivered at least %s of its target)", percent(r.Threshold))
	default:
		text = "none found (see the verdict)"
	}
	p.para("knee:      ", labelHang, text)
}

// uncertainWords says which steps make the knee a range.
func uncertainWords(steps []int) string {
	switch len(steps) {
	case 0:
		return "the steps between were inconclusive"
	case 1:
		return stepsWord(steps) + " was inconclusive"
	}
	return stepsWord(steps) + " were inconclusive"
}

func writeThresholds(p *page, checks []messages.ThresholdCheck) {
	if len(checks) > 0 {
		p.WriteString("thresholds:\n")
	}
	for _, c := range checks {
		result := "FAIL"
		if c.Pass {
			result = "PASS"
		}
		p.para("  "+result+"  ", "        ", c.Name+": "+c.Detail)
	}
}

// writeTopErrors lists a failing run's top errors with counts and an example.
func writeTopErrors(p *page, errs []messages.ErrorGroup) {
	if len(errs) > 0 {
		p.WriteString("top errors:\n")
	}
	for _, e := range errs {
		text := fmt.Sprintf("%s %q x%d (%s)", e.Phase, clip(e.Kind, 80), e.Count, plural(e.Producers, "producer"))
		if e.Example != "" {
			text += fmt.Sprintf(", e.g. %q", clip(e.Example, 120))
		}
		p.para("  ", itemHang, text)
	}
}

// WriteList writes items as RenderTable writes its findings, so that a list
// printed after the table (the demo's) looks the same: "  - " before each,
// folded to TableWidth columns.
func WriteList(w io.Writer, items []string) error {
	p := &page{width: TableWidth}
	for _, it := range items {
		p.para(itemIndent, itemHang, it)
	}
	_, err := io.WriteString(w, p.String())
	return err
}
