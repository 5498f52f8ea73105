package reporter

import (
	"bytes"
	"html/template"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
)

// stubPlots stand in for the plots in the golden pages, which then do not
// change with gonum's drawing; TestRenderHTML checks the real ones.
var stubPlots = []htmlPlot{
	{Title: "Delivered against offered rate", SVG: `<svg class="stub" id="throughput"></svg>`},
	{Title: "Response time per phase", SVG: `<svg class="stub" id="latency"></svg>`},
}

// TestRenderHTMLGolden renders every golden report, and the empty one, as
// a page and compares with testdata/<name>_html.golden (go test -run
// Golden -update rewrites them).
func TestRenderHTMLGolden(t *testing.T) {
	cases := append(goldenCases[:len(goldenCases):len(goldenCases)], struct {
		name    string
		report  func() messages.RunReport
		formats []string
	}{name: "empty", report: emptyReport})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := renderHTML(&buf, c.report(), stubPlots); err != nil {
				t.Fatalf("renderHTML(%s) error = %v", c.name, err)
			}
			checkGolden(t, filepath.Join("testdata", c.name+"_html.golden"), buf.Bytes())
		})
	}
}

// TestRenderHTML renders pages with their real plots: two inline <svg>
// elements without an XML prologue, nothing fetched from elsewhere and no
// script, whatever the report holds.
func TestRenderHTML(t *testing.T) {
	hostile := hostReport()
	hostile.Run = `<script>alert("run")</script>`
	hostile.Findings = append(hostile.Findings, `<img src="http://example.com/x.png"> & more`)
	hostile.Steps[0].Errors = []messages.ErrorGroup{{Phase: "fetch", Kind: `NO <b onmouseover="x()">`, Count: 1}}
	for _, r := range []messages.RunReport{oldReport(), emptyReport(), hostile, singleReport()} {
		var buf bytes.Buffer
		if err := RenderHTML(&buf, r); err != nil {
			t.Fatalf("RenderHTML(%s) error = %v", r.Run, err)
		}
		page := buf.String()
		if n := strings.Count(page, "<svg "); n != 2 || strings.Contains(page, "<?xml") {
			t.Errorf("RenderHTML(%s) has %d <svg> elements (want 2), XML prologue %v", r.Run, n, strings.Contains(page, "<?xml"))
		}
		for _, bad := range []string{"<script", "<img", "<link", "<iframe", "<a ", "<b on", "url("} {
			if strings.Contains(page, bad) {
				t.Errorf("RenderHTML(%s) contains %q: the page must be self-contained and escape the report", r.Run, bad)
			}
		}
	}
}

// TestHTMLView checks the banner's words against the table's: the verdict,
// the knee as a range, the last held step, and unsupported percentiles.
func TestHTMLView(t *testing.T) {
	v := newHTMLView(rangeReport(), nil)
	if v.Verdict != messages.RunKnee || !strings.HasPrefix(v.Knee, "between 1000 and 2000/s: steps 2, 3 were inconclusive") {
		t.Errorf("newHTMLView(range) verdict %q, knee %q, want knee and the range", v.Verdict, v.Knee)
	}
	if v.LastHeld != "step 1 at 500/s offered, 499/s delivered (ratio 1.00)" {
		t.Errorf("newHTMLView(range) last held = %q", v.LastHeld)
	}
	if got := v.Steps[1].Codes; len(got) != 1 || got[0] != messages.ReasonGeneratorStalled {
		t.Errorf("newHTMLView(range) step 2 codes = %v, want [generator_stalled]", got)
	}
	open := newHTMLView(openReport(), nil)
	fetch := open.Steps[0].Phases[1] // login, fetch in session order
	if fetch.Name != "fetch" || !fetch.Pcts[2].Unsupported || fetch.Pcts[0].Unsupported {
		t.Errorf("newHTMLView(open) step 1 %s = %+v, want P99 unsupported, P50 not", fetch.Name, fetch.Pcts)
	}
}

// TestInlineSVG keeps the <svg> element alone.
func TestInlineSVG(t *testing.T) {
	fig, err := PlotThroughput(oldReport())
	if err != nil {
		t.Fatal(err)
	}
	svg, err := inlineSVG(fig)
	if err != nil {
		t.Fatalf("inlineSVG() error = %v", err)
	}
	if !regexp.MustCompile(`^<svg [^>]*viewBox=`).MatchString(string(svg)) || !strings.HasSuffix(strings.TrimSpace(string(svg)), "</svg>") {
		t.Errorf("inlineSVG() = %.80q…, want one <svg viewBox=…> element", svg)
	}
	var _ template.HTML = svg
}
