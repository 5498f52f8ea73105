package reporter

import (
	"bytes"
	_ "embed"
	"html/template"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/imapload/imapload/messages"
)

// htmlPage is the page of RenderHTML; the template escapes every figure and
// word that comes from the report, and only the plots' SVG goes in as is.
//
//go:embed html.tmpl
var htmlPage string

var htmlTemplate = template.Must(template.New("report.html").Parse(htmlPage))

// htmlPlot is a plot inlined in the page: its SVG element and what it shows.
type htmlPlot struct {
	Title string
	SVG   template.HTML
}

// RenderHTML writes r as one self-contained HTML page, for a person to look
// at in a browser: the verdict and the knee first, then the plots inline as
// SVG, the step table (one row per step, each phase's P50, P90 and P99 with
// their 95% intervals) and the findings. It needs no JavaScript, fonts or
// other files, so the page can be mailed or archived on its own.
func RenderHTML(w io.Writer, r messages.RunReport) error {
	var plots []htmlPlot
	for _, f := range []struct {
		title string
		make  func(messages.RunReport) (*Figure, error)
	}{{"Delivered against offered rate", PlotThroughput}, {"Response time per phase", PlotLatency}} {
		fig, err := f.make(r)
		if err != nil {
			return err
		}
		svg, err := inlineSVG(fig)
		if err != nil {
			return err
		}
		plots = append(plots, htmlPlot{Title: f.title, SVG: svg})
	}
	server, err := serverHTMLPlot(r) // nil unless a step has server figures (plotserver.go)
	if err != nil {
		return err
	}
	if server != nil {
		plots = append(plots, *server)
	}
	return renderHTML(w, r, plots)
}

// inlineSVG renders fig as SVG and keeps the <svg> element alone: the XML
// prologue and comment before it are not allowed inside HTML. gonum's SVG
// canvas escapes every text it draws, so the element is safe to inline.
func inlineSVG(fig *Figure) (template.HTML, error) {
	var buf bytes.Buffer
	if err := fig.WriteTo(&buf, "svg"); err != nil {
		return "", err
	}
	svg := buf.String()
	if i := strings.Index(svg, "<svg"); i >= 0 {
		svg = svg[i:]
	}
	return template.HTML(svg), nil // #nosec: drawn by vgsvg, which escapes its text
}

// renderHTML fills the page with r and the given plots; the golden tests
// pass stand-ins for the plots, whose drawing plot_test.go checks.
func renderHTML(w io.Writer, r messages.RunReport, plots []htmlPlot) error {
	var buf bytes.Buffer
	if err := htmlTemplate.Execute(&buf, newHTMLView(r, plots)); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// htmlView is what the page shows, every figure already formatted as the
// table formats it, so that the two never disagree.
type htmlView struct {
	Run, Generated, Threshold string
	Verdict, VerdictWords     string
	Knee, LastHeld            string
	Inconclusive              string
	Reasons                   []messages.Reason
	Thresholds                []messages.ThresholdCheck
	TopErrors                 []string
	Plots                     []htmlPlot
	Steps                     []htmlStep
	Findings                  []string
}

// htmlStep is one step's row: its figures, then a row per phase under it.
type htmlStep struct {
	Step                       int
	Mark, Verdict              string
	Codes                      []string
	Target, Offered, Delivered string
	Ratio                      string
	Sessions, Script           string
	Rows                       int // rows the step's cells span: one per phase, at least one
	Phases                     []htmlPhase
	Notes                      []string
}

// htmlPhase is a phase of a step: counts and three percentiles.
type htmlPhase struct {
	Name, Count, Errors string
	Pcts                [3]htmlPct
}

// htmlPct is a percentile with its interval; Unsupported marks one that is
// only a lower bound or has no upper bound, so the page greys it out.
type htmlPct struct {
	Value, CI   string
	Unsupported bool
}

func newHTMLView(r messages.RunReport, plots []htmlPlot) htmlView {
	v := runVerdict(r)
	words, ok := runVerdictWords[v]
	if !ok {
		words = v
	}
	var knee page // unfolded: width 0
	writeKnee(&knee, r)
	view := htmlView{Run: r.Run, Generated: r.Generated.UTC().Format(time.RFC3339), Threshold: ratio(r.Threshold),
		Verdict: v, VerdictWords: words, Knee: strings.TrimSpace(strings.TrimPrefix(knee.String(), "knee:")),
		LastHeld: "none", Reasons: r.Reasons, Thresholds: r.Thresholds, Plots: plots, Findings: r.Findings}
	if h := r.LastHeld; h != nil {
		view.LastHeld = "step " + strconv.Itoa(h.Step) + " at " + rate(h.Rate) + "/s offered, " + rate(h.DeliveredRate) +
			"/s delivered (ratio " + ratio(h.Ratio) + ")"
	}
	if bad := inconclusiveSteps(r.Steps); len(bad) > 0 {
		view.Inconclusive = stepsWord(bad) + " (never the knee nor the last held step; reasons in the table)"
	}
	for _, e := range r.TopErrors {
		view.TopErrors = append(view.TopErrors, e.Phase+" "+strconv.Quote(clip(e.Kind, 80))+" x"+strconv.FormatUint(e.Count, 10)+
			" ("+plural(e.Producers, "producer")+")")
	}
	for i := range r.Steps {
		view.Steps = append(view.Steps, newHTMLStep(&r.Steps[i], mark(r, r.Steps[i].Step), r.Threshold))
	}
	return view
}

func newHTMLStep(s *messages.StepResult, mark string, threshold float64) htmlStep {
	hs := htmlStep{Step: s.Step, Mark: mark, Verdict: stepVerdict(s, threshold),
		Target: rate(s.TargetRate), Delivered: rate(s.DeliveredRate), Ratio: ratio(s.Ratio),
		Sessions: sessions(s), Script: s.Script}
	if s.OfferedRate > 0 && rate(s.OfferedRate) != hs.Target {
		hs.Offered = rate(s.OfferedRate)
	}
	if isInconclusive(s) {
		for _, rs := range stepReasons(s) {
			hs.Codes = append(hs.Codes, rs.Code)
			hs.Notes = append(hs.Notes, "inconclusive: "+reasonText(rs))
		}
	}
	if len(s.Missing) > 0 {
		hs.Notes = append(hs.Notes, "missing: "+strings.Join(s.Missing, ", "))
	}
	if n := checksNote(s); n != "" {
		hs.Notes = append(hs.Notes, n)
	}
	if n := serverNote(s); n != "" {
		hs.Notes = append(hs.Notes, n)
	}
	if errs := sortedErrors(s.Errors); len(errs) > 0 {
		hs.Notes = append(hs.Notes, "errors: "+errorList(errs))
	}
	for _, name := range phaseNames(s.Phases) {
		hs.Phases = append(hs.Phases, newHTMLPhase(name, s.Phases[name]))
	}
	hs.Rows = max(1, len(hs.Phases))
	return hs
}

func newHTMLPhase(name string, p messages.PhaseResult) htmlPhase {
	pct := func(n string, v float64, iv messages.Interval) htmlPct {
		return htmlPct{Value: pctText(p, n, v), CI: ciText(p, n, iv), Unsupported: unsupported(p, n, iv)}
	}
	return htmlPhase{Name: name, Count: strconv.FormatUint(p.Count, 10), Errors: strconv.FormatUint(failed(p), 10),
		Pcts: [3]htmlPct{pct(nameP50, p.P50, p.CI.P50), pct(nameP90, p.P90, p.CI.P90), pct(nameP99, p.P99, p.CI.P99)}}
}

// unsupported reports whether percentile name of p is not a measured value
// with a two-sided interval: too few samples, a rank among commands never
// sent, or an interval open above.
func unsupported(p messages.PhaseResult, name string, iv messages.Interval) bool {
	return listed(p.TooFew, name) || listed(p.Above, name) || iv.Open()
}
