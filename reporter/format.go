package reporter

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/imapload/imapload/messages"
)

// ms formats a latency in milliseconds with about three significant digits
// and no exponent: 0.210, 1.23, 58.3, 412.
func ms(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case v == 0:
		return "0"
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case math.Abs(v) >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// rate formats commands per second: whole numbers from 100 up, one decimal below.
func rate(v float64) string {
	if math.Abs(v) >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// ratio formats a delivered/target ratio with two decimals.
func ratio(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// percent formats a share (0.62) as a whole percentage ("62%").
func percent(v float64) string { return strconv.FormatFloat(100*v, 'f', 0, 64) + "%" }

// joinInts lists step numbers: "2, 3, 5".
func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// plural returns "1 producer" or "2 producers".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// stepsWord returns "step 3" or "steps 3, 4".
func stepsWord(ns []int) string {
	if len(ns) == 1 {
		return "step " + strconv.Itoa(ns[0])
	}
	return "steps " + joinInts(ns)
}

// phaseNames returns the phase names of a step in session order (dial, login,
// list…), then any name unknown to this version, sorted.
func phaseNames(phases map[string]messages.PhaseResult) []string {
	names := make([]string, 0, len(phases))
	for name := range phases {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(phaseOrder(a), phaseOrder(b)), strings.Compare(a, b))
	})
	return names
}

func phaseOrder(name string) int {
	p, err := messages.ParsePhase(name)
	if err != nil {
		return messages.NumPhases
	}
	return int(p)
}

// failed is a phase's failed commands, attempted − succeeded.
func failed(p messages.PhaseResult) uint64 {
	if p.Succeeded > p.Attempted {
		return 0
	}
	return p.Attempted - p.Succeeded
}

// clip shortens s to at most n runes, marking the cut with "...".
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-3]) + "..."
}
