package reporter

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/imapload/imapload/messages"
)

// RenderCompare writes c as a table, one run per row in time order, then
// the knee across runs as bars: each bar spans the range the run's knee lies
// in, so bars that do not overlap are knees that really differ.
func RenderCompare(w io.Writer, c Comparison) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	phases := comparePhases(c)
	head := "run\twhen (UTC)\tverdict\tknee lies in\tvs previous\tlast held"
	for _, ph := range phases {
		head += "\t" + ph + " p99 at last held"
	}
	fmt.Fprintln(tw, head)
	for _, r := range c.Runs {
		fmt.Fprintln(tw, compareRow(r, phases))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return kneeBars(w, c)
}

func compareRow(r CompareRun, phases []string) string {
	held := "none"
	if r.LastHeld != nil {
		held = rate(r.LastHeld.Rate) + "/s"
	}
	cols := []string{r.Run, r.When.Format("2006-01-02 15:04"), r.Verdict, kneeRange(r.KneeRange), orDash(r.KneeChange), held}
	for _, ph := range phases {
		p, ok := r.P99[ph]
		if !ok {
			cols = append(cols, "-")
			continue
		}
		cell := ms(p.P99) + " ms " + interval(p.CI)
		if p.Change != "" {
			cell += " " + p.Change
		}
		cols = append(cols, cell)
	}
	return strings.Join(cols, "\t")
}

// kneeRange writes (low, high]/s, "above low/s" when open.
func kneeRange(iv messages.Interval) string {
	if iv.Open() {
		if iv[0] == 0 {
			return "unknown"
		}
		return "above " + rate(iv[0]) + "/s"
	}
	return "(" + rate(iv[0]) + ", " + rate(iv[1]) + "]/s"
}

func interval(iv messages.Interval) string {
	if iv.Open() {
		return "[" + ms(iv[0]) + ", open)"
	}
	return "[" + ms(iv[0]) + ", " + ms(iv[1]) + "]"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// barWidth is the width of the knee bars, in characters.
const barWidth = 40

// kneeBars draws each run's knee range on one scale: '=' up to the last
// held rate, '#' over the range the knee lies in, '>' when it is open.
func kneeBars(w io.Writer, c Comparison) error {
	top := 0.0
	for _, r := range c.Runs {
		top = max(top, r.KneeRange[0])
		if !r.KneeRange.Open() {
			top = max(top, r.KneeRange[1])
		}
	}
	if top == 0 {
		_, err := fmt.Fprintln(w, "knee across runs: no run measured a rate that held")
		return err
	}
	fmt.Fprintf(w, "knee across runs (0 to %s/s; '#' is where the knee lies):\n", rate(top))
	width := 0
	for _, r := range c.Runs {
		width = max(width, len(r.Run))
	}
	for _, r := range c.Runs {
		if _, err := fmt.Fprintf(w, "  %-*s |%s| %s\n", width, r.Run, bar(r.KneeRange, top), kneeRange(r.KneeRange)); err != nil {
			return err
		}
	}
	return nil
}

func bar(iv messages.Interval, top float64) string {
	lo := int(math.Round(iv[0] / top * barWidth))
	hi := barWidth
	if !iv.Open() {
		hi = max(int(math.Round(iv[1]/top*barWidth)), lo+1)
	}
	b := strings.Repeat("=", lo) + strings.Repeat("#", hi-lo)
	if iv.Open() {
		b = b[:barWidth-1] + ">"
	}
	return b + strings.Repeat(" ", max(barWidth-len(b), 0))
}

// RenderCompareJSON writes c as indented JSON.
func RenderCompareJSON(w io.Writer, c Comparison) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}
