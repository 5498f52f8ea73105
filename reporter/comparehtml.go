package reporter

import (
	"html/template"
	"io"
	"math"
)

// RenderCompareHTML writes c as one self-contained page: the table, and the
// knee across runs in time order as an SVG chart, each run's bar spanning
// the range its knee lies in.
func RenderCompareHTML(w io.Writer, c Comparison) error {
	return compareTmpl.Execute(w, compareView(c))
}

// kneeBar is one run's bar in the chart, in SVG units.
type kneeBar struct {
	Run                 CompareRun
	Y, Held, Knee, Open float64
	Label               string
}

type comparePage struct {
	Comparison
	Phases []string
	Bars   []kneeBar
	Height float64
	Top    string
}

// The chart's geometry: a left margin for the run ids, then chartWidth units
// for 0 to the highest rate any run resolved.
const (
	chartLeft  = 160.0
	chartWidth = 480.0
	barHeight  = 22.0
)

func compareView(c Comparison) comparePage {
	top := 0.0
	for _, r := range c.Runs {
		top = max(top, r.KneeRange[0])
		if !r.KneeRange.Open() {
			top = max(top, r.KneeRange[1])
		}
	}
	p := comparePage{Comparison: c, Phases: comparePhases(c), Top: rate(top)}
	x := func(v float64) float64 {
		if top == 0 || math.IsInf(v, 1) {
			return chartWidth
		}
		return v / top * chartWidth
	}
	for i, r := range c.Runs {
		b := kneeBar{Run: r, Y: float64(i) * (barHeight + 8), Held: x(r.KneeRange[0]), Label: kneeRange(r.KneeRange)}
		b.Knee = max(x(r.KneeRange[1])-b.Held, 2)
		if r.KneeRange.Open() {
			b.Open = 1
		}
		p.Bars = append(p.Bars, b)
	}
	p.Height = float64(len(c.Runs))*(barHeight+8) + 30
	return p
}

var compareTmpl = template.Must(template.New("compare").Funcs(template.FuncMap{
	"rate": rate, "ms": ms, "knee": kneeRange, "iv": interval, "dash": orDash,
	"add": func(a, b float64) float64 { return a + b },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>imapload: runs compared</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:4px 10px;text-align:left}
.higher{color:#0a6b2b;font-weight:600}.lower{color:#b3261e;font-weight:600}
</style></head><body>
<h1>Runs compared</h1>
<p>A knee is known to lie above the last rate that held and at most the first that did not; a change is
named only where those ranges (or, for a P99, its intervals at the same offered rate) do not overlap.</p>
<table><tr><th>run</th><th>when (UTC)</th><th>verdict</th><th>knee lies in</th><th>vs previous</th><th>last held</th>
{{range .Phases}}<th>{{.}} p99 at last held</th>{{end}}</tr>
{{range $r := .Runs}}<tr><td>{{$r.Run}}</td><td>{{$r.When.Format "2006-01-02 15:04"}}</td><td>{{$r.Verdict}}</td>
<td>{{knee $r.KneeRange}}</td><td class="{{$r.KneeChange}}">{{dash $r.KneeChange}}</td>
<td>{{with $r.LastHeld}}{{rate .Rate}}/s{{else}}none{{end}}</td>
{{range $.Phases}}<td>{{with index $r.P99 .}}{{ms .P99}} ms {{iv .CI}} <span class="{{.Change}}">{{.Change}}</span>{{else}}-{{end}}</td>{{end}}</tr>
{{end}}</table>
<h2>The knee across runs</h2>
<svg xmlns="http://www.w3.org/2000/svg" width="{{add 360 640}}" height="{{.Height}}" role="img" aria-label="knee range per run">
{{range .Bars}}<g transform="translate(0,{{.Y}})">
<text x="0" y="16">{{.Run.Run}}</text>
<rect x="160" y="2" width="{{.Held}}" height="18" fill="#b8c7dd"/>
<rect x="{{add 160 .Held}}" y="2" width="{{.Knee}}" height="18" fill="{{if .Open}}#9bbf9b{{else}}#1f5aa8{{end}}"/>
<text x="650" y="16">{{.Label}}</text></g>
{{end}}<text x="160" y="{{.Height}}" dy="-6">0</text><text x="640" y="{{.Height}}" dy="-6" text-anchor="end">{{.Top}}/s</text>
</svg>
<p>Light: rates that held. Dark: where the knee lies. Green: no knee found (the server held every step offered).</p>
</body></html>
`))
