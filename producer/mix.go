package producer

import (
	"fmt"
	"sort"

	"github.com/imapload/imapload/messages"
)

// mix draws the phase of each scheduled command from relative weights (the
// workload profile). It is immutable once built, so a step can share it.
type mix struct {
	phases []messages.Phase // phases with a positive weight, in phase order
	cum    []float64        // cumulative weights, normalized to end at 1
}

// newMix builds a mix from weights by phase name, validated with
// messages.ValidateMix.
func newMix(weights map[string]float64) (mix, error) {
	if err := messages.ValidateMix(weights); err != nil {
		return mix{}, fmt.Errorf("%w: mix: %w", ErrBadOptions, err)
	}
	var m mix
	sum := 0.0
	for _, p := range messages.Phases() {
		if w := weights[p.String()]; w > 0 {
			sum += w
			m.phases = append(m.phases, p)
			m.cum = append(m.cum, sum)
		}
	}
	for i := range m.cum {
		m.cum[i] /= sum
	}
	return m, nil
}

// draw maps u, uniform in [0, 1), to a phase with probability proportional
// to its weight.
func (m mix) draw(u float64) messages.Phase {
	i := sort.SearchFloat64s(m.cum, u)
	for i < len(m.cum) && m.cum[i] == u { // u on a boundary belongs to the next phase
		i++
	}
	return m.phases[min(i, len(m.phases)-1)]
}
