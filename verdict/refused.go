package verdict

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/imapload/imapload/messages"
)

// RefusedShare is the share of one command's attempts that the server
// refused (answered NO or BAD without a response code of load, RFC 5530)
// at or above which a step is failing, whatever the rate and however few
// of all the commands that command is: a server that refuses a quarter of
// its SELECTs, or every LIST, is not answering correctly, and the
// shortfall it makes is not a knee. A refusal that says the server is
// loaded ([LIMIT], [UNAVAILABLE], [INUSE]) is load, and stays the knee's.
const RefusedShare = 0.25

// refusedMin is the fewest refusals of one command that make a step failing:
// under it, one unlucky refusal of a rare command is no finding.
const refusedMin = 3

// loadCodes are the response codes (RFC 5530) that say a refusal is load.
var loadCodes = []string{"[LIMIT]", "[UNAVAILABLE]", "[INUSE]"}

// refused says which command the server refused at RefusedShare or more of
// its attempts, with the count and the error seen most, or "" when none.
// A step holding IDLE connections is exempt, as from failing.
func refused(r messages.StepResult) string {
	if c := r.Connections; c != nil && c.Held > 0 {
		return ""
	}
	for _, ph := range slices.Sorted(maps.Keys(r.Phases)) {
		n, top := refusalsIn(r, ph)
		a := r.Phases[ph].Attempted
		if n >= refusedMin && a > 0 && float64(n) >= RefusedShare*float64(a) {
			return fmt.Sprintf("the server refused %d of %d %s attempts (%.0f%%, at least %.0f%% of one command is a refusal, not load); most often %s (%d)",
				n, a, ph, 100*float64(n)/float64(a), 100*RefusedShare, top.Kind, top.Count)
		}
	}
	return ""
}

// refusalsIn counts phase's errors that are refusals, and the most frequent.
func refusalsIn(r messages.StepResult, phase string) (n uint64, top messages.ErrorGroup) {
	for _, e := range r.Errors {
		if e.Phase != phase || !isRefusal(e.Kind) {
			continue
		}
		n += e.Count
		if e.Count > top.Count {
			top = e
		}
	}
	return n, top
}

// isRefusal reports whether an error kind is a tagged NO or BAD answer
// that does not say the server is loaded.
func isRefusal(kind string) bool {
	k := strings.TrimPrefix(kind, "imap: ")
	if !strings.HasPrefix(k, "NO ") && !strings.HasPrefix(k, "BAD ") || strings.Contains(k, "timeout") {
		return false
	}
	return !slices.ContainsFunc(loadCodes, func(c string) bool { return strings.Contains(k, c) })
}
