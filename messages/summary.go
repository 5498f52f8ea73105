package messages

import (
	"math"
	"strconv"
	"strings"
)

// SummaryHeader is the NATS header of every published step result and run
// report that holds Summary's one line, so that a plain `nats sub` on
// "imapload.results.<run>" is readable without jq.
const SummaryHeader = "Imapload-Summary"

// Summary is r in one line: step, revision, verdict (with the reasons'
// codes), delivered against offered, each phase's P99 and the share of
// scheduled commands that failed. For example:
//
//	step 3: held: 3987.2 of 4000/s delivered (99.7%); p99 dial 1.2 ms, login 45.1 ms, fetch 12.3 ms; 0.1% failed
func (r *StepResult) Summary() string {
	var b strings.Builder
	b.WriteString("step " + strconv.Itoa(r.Step))
	if r.Revision > 0 {
		b.WriteString(" (revision " + strconv.Itoa(r.Revision) + ")")
	}
	b.WriteString(": " + r.Verdict + reasonCodes(r.Reasons))
	b.WriteString(": " + num(tenth(r.DeliveredRate)) + " of " + num(tenth(r.TargetRate)) + "/s delivered (" + ratioPercent(r.Ratio) + ")")
	sep := "; p99 "
	for _, ph := range Phases() {
		p, ok := r.Phases[ph.String()]
		if !ok || p.Count == 0 {
			continue
		}
		b.WriteString(sep + ph.String() + " " + num(sig(p.P99, 3)) + " ms")
		sep = ", "
	}
	if r.Attempted > 0 {
		b.WriteString("; " + percent(float64(r.Attempted-min(r.Succeeded, r.Attempted))/float64(r.Attempted)) + " failed")
	}
	if len(r.Missing) > 0 {
		b.WriteString("; missing " + strings.Join(r.Missing, ","))
	}
	return oneLine(b.String())
}

// Summary is rep in one line: the run's verdict, the knee (or the highest
// rate that held) and how many steps. For example:
//
//	run r1: knee at 8000/s (step 4), last held 4000/s (step 3); 4 steps
func (rep *RunReport) Summary() string {
	var b strings.Builder
	b.WriteString("run " + rep.Run + ": ")
	switch {
	case rep.Verdict == RunKnee && rep.Knee != nil:
		b.WriteString("knee at " + num(tenth(rep.Knee.Rate)) + "/s (step " + strconv.Itoa(rep.Knee.Step) + ")")
		if rep.Knee.Low > 0 {
			b.WriteString(", somewhere from " + num(tenth(rep.Knee.Low)) + "/s")
		}
	case rep.Verdict == RunNoKnee:
		b.WriteString("no knee")
	case rep.Verdict == RunFailing:
		b.WriteString("failing")
	default:
		b.WriteString(rep.Verdict + reasonCodes(rep.Reasons))
	}
	if rep.LastHeld != nil {
		b.WriteString(", last held " + num(tenth(rep.LastHeld.Rate)) + "/s (step " + strconv.Itoa(rep.LastHeld.Step) + ")")
	}
	if len(rep.TopErrors) > 0 {
		e := rep.TopErrors[0]
		b.WriteString("; top error " + e.Phase + ": " + e.Kind)
	}
	b.WriteString("; " + strconv.Itoa(len(rep.Steps)) + " step")
	if len(rep.Steps) != 1 {
		b.WriteString("s")
	}
	return oneLine(b.String())
}

// reasonCodes is " (code, code)" for reasons, or nothing.
func reasonCodes(rs []Reason) string {
	if len(rs) == 0 {
		return ""
	}
	codes := make([]string, 0, len(rs))
	for _, r := range rs {
		if len(codes) == 0 || codes[len(codes)-1] != r.Code {
			codes = append(codes, r.Code)
		}
	}
	return " (" + strings.Join(codes, ", ") + ")"
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// percent is a share as a percentage to 3 significant digits: 0.99712 → "99.7%".
func percent(v float64) string { return num(sig(v*100, 3)) + "%" }

// ratioPercent is a delivered/target ratio as a percentage rounded down to
// 0.1%, so that it never reads as reaching a threshold it fell short of:
// 0.89996 → "89.9%".
func ratioPercent(v float64) string { return num(math.Floor(v*1000+1e-9)/10) + "%" }

// oneLine replaces control characters (a header value is one line).
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
