package progress

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// Tracker accumulates one step's batches as they arrive. Not safe for
// concurrent use.
type Tracker struct {
	cmd       messages.StepCommand
	completed uint64
	scheduled uint64
	dropped   uint64
	failed    uint64
	kinds     map[string]uint64
	measured  map[string]int64  // producer → furthest To (ns into the window)
	lagging   map[string]string // producer → why it fell behind its schedule
}

// NewTracker returns a tracker for cmd.
func NewTracker(cmd messages.StepCommand) *Tracker {
	return &Tracker{cmd: cmd, kinds: map[string]uint64{}, measured: map[string]int64{}, lagging: map[string]string{}}
}

// Add counts a batch of the tracked step; others are ignored.
func (t *Tracker) Add(b *messages.SampleBatch) {
	if b.Run != t.cmd.Run || b.Step != t.cmd.Step {
		return
	}
	t.completed += b.Completed
	t.scheduled += b.Scheduled
	t.dropped += b.Health.Dropped
	t.measured[b.Producer] = max(t.measured[b.Producer], b.To)
	if b.Health.Saturated {
		t.lagging[b.Producer] = verdict.LagCause(b.Health)
	}
	for _, p := range b.Phases {
		for _, e := range p.Errors {
			t.failed += e.Count
			t.kinds[p.Phase.String()+": "+e.Kind] += e.Count
		}
	}
}

// minSpan is the least measured time a delivered rate is shown for: over a
// few milliseconds (a step stopped at once) a rate means nothing.
const minSpan = int64(500 * time.Millisecond)

// Delivered is the fleet's delivered rate so far, commands/s: completed
// commands over the measured time so far (the median producer's), 0 until
// minSpan of the window has been measured.
func (t *Tracker) Delivered() float64 {
	var spans []int64
	for _, to := range t.measured {
		if to >= minSpan {
			spans = append(spans, to)
		}
	}
	if len(spans) == 0 {
		return 0
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i] < spans[j] })
	return float64(t.completed) / time.Duration(spans[len(spans)/2]).Seconds()
}

// Line renders the progress after elapsed since the step was published.
func (t *Tracker) Line(elapsed time.Duration) string {
	total := t.cmd.WarmupOrDefault() + t.cmd.Duration.D()
	var b strings.Builder
	fmt.Fprintf(&b, "step %d  %5.1fs/%.0fs", t.cmd.Step, min(elapsed, total).Seconds(), total.Seconds())
	if elapsed < t.cmd.WarmupOrDefault() {
		b.WriteString(" (warm-up)")
	}
	d := t.Delivered()
	fmt.Fprintf(&b, "  target %.0f/s  delivered %.0f/s", t.cmd.Rate, d)
	if t.cmd.Rate > 0 && d > 0 {
		fmt.Fprintf(&b, " (%.0f%%)", 100*d/t.cmd.Rate)
	}
	fmt.Fprintf(&b, "  errors %d  dropped %d  producers %d", t.failed, t.dropped, len(t.measured))
	if k, n := t.topKind(); n > 0 {
		fmt.Fprintf(&b, "  top error: %s ×%d", fit(k, 60), n)
	}
	if lag := t.laggingText(); lag != "" {
		fmt.Fprintf(&b, "  BEHIND SCHEDULE: %s", lag)
	}
	return b.String()
}

// laggingText lists the producers that fell behind their schedule, with why.
func (t *Tracker) laggingText() string {
	var parts []string
	for p, why := range t.lagging {
		parts = append(parts, p+" ("+why+")")
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func (t *Tracker) topKind() (string, uint64) {
	best, n := "", uint64(0)
	for k, c := range t.kinds {
		if c > n || (c == n && k < best) {
			best, n = k, c
		}
	}
	return best, n
}
