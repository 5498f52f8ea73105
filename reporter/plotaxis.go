package reporter

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"

	"github.com/imapload/imapload/messages"
)

// geometricFactor is the smallest growth from one offered rate to the next
// for which the plots use a log scale: a ramp that (roughly) doubles puts
// its steps evenly on a log axis, and bunches its first ones on a linear one.
const geometricFactor = 1.5

// maxRateLabels is how many offered rates an axis labels, and
// maxPanelRateLabels how many a small panel does: a longer ramp gets a
// tick at every rate and a label at every few, so that labels never run
// into each other.
const (
	maxRateLabels      = 10
	maxPanelRateLabels = 3
)

// rateAxis is the offered-rate axis of the plots: ticks at the offered rates
// themselves, a log scale when they grow geometrically, linear otherwise.
type rateAxis struct {
	rates    []float64 // distinct positive offered (target) rates, ascending
	log      bool
	min, max float64
	// labels is how many rates at most get a label; 0 means maxRateLabels.
	labels int
}

// newRateAxis spans the steps' offered rates with some room either side;
// fromZero starts a linear axis at 0 (the throughput plot, where y = x
// passes through the origin).
func newRateAxis(steps []messages.StepResult, fromZero bool) rateAxis {
	var a rateAxis
	for _, s := range steps {
		if s.TargetRate > 0 && !slices.Contains(a.rates, s.TargetRate) {
			a.rates = append(a.rates, s.TargetRate)
		}
	}
	slices.Sort(a.rates)
	if len(a.rates) == 0 {
		return rateAxis{min: 0, max: 1}
	}
	lo, hi := a.rates[0], a.rates[len(a.rates)-1]
	a.log = geometric(a.rates)
	switch pad := 0.1 * (hi - lo); {
	case a.log:
		a.min, a.max = lo/1.4, hi*1.4
	case len(a.rates) == 1 && fromZero:
		a.min, a.max = 0, 2*hi
	case len(a.rates) == 1:
		a.min, a.max = hi/2, 1.5*hi
	case fromZero:
		a.min, a.max = 0, hi+pad
	default:
		a.min, a.max = max(0, lo-pad), hi+pad
	}
	return a
}

// geometric reports whether rates (ascending, three or more) grow by at
// least geometricFactor from each to the next.
func geometric(rates []float64) bool {
	if len(rates) < 3 {
		return false
	}
	for i := 1; i < len(rates); i++ {
		if rates[i] < geometricFactor*rates[i-1] {
			return false
		}
	}
	return true
}

// allDelivered reports whether every step delivered something: a log axis
// cannot show nothing.
func allDelivered(steps []messages.StepResult) bool {
	return !slices.ContainsFunc(steps, func(s messages.StepResult) bool { return !(s.DeliveredRate > 0) })
}

// apply sets ax to the offered rates: range, scale and ticks.
func (a rateAxis) apply(ax *plot.Axis) {
	ax.Min, ax.Max = a.min, a.max
	ax.Tick.Marker = rateTicks(a.rates, cmp.Or(a.labels, maxRateLabels))
	if a.log {
		ax.Scale = plot.LogScale{}
	}
}

// applyDelivered sets ax, the delivered rate, to the same scale as a: the
// offered rates' ticks on a log scale (so y = x runs corner to corner), or
// from 0 on a linear one, ticks at the offered rates either way: a delivered
// rate on a grid line was delivered in full.
func (a rateAxis) applyDelivered(ax *plot.Axis, steps []messages.StepResult) {
	lo, hi := math.Inf(1), 0.0
	for _, s := range steps {
		lo, hi = min(lo, s.DeliveredRate), max(hi, s.DeliveredRate)
	}
	if !a.log {
		ax.Min, ax.Max = 0, max(a.max, 1.05*hi)
		ax.Tick.Marker = append(plot.ConstantTicks{{Value: 0, Label: "0"}}, rateTicks(a.rates, maxRateLabels)...)
		return
	}
	ax.Min, ax.Max = min(a.min, lo/1.4), max(a.max, 1.1*hi)
	ax.Scale, ax.Tick.Marker = plot.LogScale{}, rateTicks(a.rates, maxRateLabels)
}

// rateTicks puts a tick at every rate and labels up to labels of them (the
// first, then evenly) with the rate as the tables write it.
func rateTicks(rates []float64, labels int) plot.ConstantTicks {
	every := (len(rates) + labels - 1) / labels
	ticks := make(plot.ConstantTicks, len(rates))
	for i, r := range rates {
		ticks[i].Value = r
		if i%max(every, 1) == 0 {
			ticks[i].Label = rate(r)
		}
	}
	return ticks
}

// latencyTicks marks a log axis of milliseconds at 1, 2 and 5 of each
// decade (only 1 when the axis spans more than three decades), with
// unlabelled ticks between: LogTicks would label nothing on an axis that
// spans less than a decade.
type latencyTicks struct{}

var _ plot.Ticker = latencyTicks{}

// Ticks returns the ticks between lo and hi (both > 0).
func (latencyTicks) Ticks(lo, hi float64) []plot.Tick {
	first, last := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	labelled := []int{1, 2, 5}
	if last-first > 3 {
		labelled = []int{1}
	}
	var ticks []plot.Tick
	for e := first; e <= last; e++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow10(e)
			if e < 0 {
				v = float64(m) / math.Pow10(-e) // 2/100 is 0.02, 2*0.01 is not quite
			}
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if slices.Contains(labelled, m) {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}
