package aggregator

import (
	"math"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/imapload/imapload/messages"
)

// quantiles are the percentiles every result reports, in Percentiles order.
var quantiles = [4]float64{0.50, 0.90, 0.99, 0.999}

// percentileNames name quantiles in Disagree.
var percentileNames = [4]string{"p50", "p90", "p99", "p999"}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// sketchPercentiles reads the percentiles of a microsecond sketch, in ms.
// An empty or nil sketch gives zeros.
func sketchPercentiles(s *ddsketch.DDSketch) messages.Percentiles {
	var v [4]float64
	for i, q := range quantiles {
		v[i] = sketchQuantile(s, q)
	}
	return messages.Percentiles{P50: v[0], P90: v[1], P99: v[2], P999: v[3], Max: sketchMax(s)}
}

// sketchQuantile is the q-quantile of a microsecond sketch, in ms (0 if empty).
func sketchQuantile(s *ddsketch.DDSketch, q float64) float64 {
	if s == nil || s.IsEmpty() {
		return 0
	}
	v, err := s.GetValueAtQuantile(q)
	if err != nil || !finite(v) {
		return 0
	}
	return v / 1000
}

func sketchMax(s *ddsketch.DDSketch) float64 {
	if s == nil || s.IsEmpty() {
		return 0
	}
	v, err := s.GetMaxValue()
	if err != nil || !finite(v) {
		return 0
	}
	return v / 1000
}

func sketchMin(s *ddsketch.DDSketch) float64 {
	if s == nil || s.IsEmpty() {
		return 0
	}
	v, err := s.GetMinValue()
	if err != nil || !finite(v) {
		return 0
	}
	return v / 1000
}

// sketchCount is the number of values in s.
func sketchCount(s *ddsketch.DDSketch) float64 {
	if s == nil {
		return 0
	}
	return s.GetCount()
}

// mergeAll returns a new sketch holding every non-nil sketch of srcs, or nil.
func mergeAll(srcs ...*ddsketch.DDSketch) *ddsketch.DDSketch {
	var out *ddsketch.DDSketch
	for _, s := range srcs {
		switch {
		case s == nil || s.IsEmpty():
		case out == nil:
			out = s.Copy()
		default:
			_ = out.MergeWith(s)
		}
	}
	return out
}
