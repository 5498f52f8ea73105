package aggregator

import (
	"math"
	"sort"

	"github.com/imapload/imapload/messages"
)

// Bimodality rule (see doc.go): a two-component Gaussian mixture is fitted to
// ln(latency) of the weighted sample; the phase is bimodal when Ashman's D
// exceeds ashmanMin, the sample dips between the two means (see dip), and
// each side of the valley holds at least minModeShare of the weight.
const (
	ashmanMin    = 2.0
	minModeShare = 0.05
	dipRatio     = 0.7  // the valley holds under this share of either peak
	logBin       = 0.05 // histogram bin width in ln(µs): 5% steps
	emMaxIter    = 200
	antimodeGrid = 256
)

// logHist is the weighted sample binned in ln(µs).
type logHist struct {
	x0 float64   // ln of the lower edge of bin 0
	h  []float64 // weight per bin, summing to 1
}

func (h *logHist) centre(b int) float64 { return h.x0 + (float64(b)+0.5)*logBin }

// logHistogram bins the sample; nil when it spans less than three bins.
func (w *weighted) logHistogram() *logHist {
	lo := math.Log(math.Max(float64(w.micros(0)), 1))
	hi := math.Log(math.Max(float64(w.micros(len(w.keys)-1)), 1))
	nb := int((hi-lo)/logBin) + 1
	if nb < 3 {
		return nil
	}
	h := &logHist{x0: lo, h: make([]float64, nb)}
	j, prev := 0, 0.0
	for b := range h.h {
		edge := math.Exp(lo + float64(b+1)*logBin)
		for j < len(w.keys) && (float64(w.micros(j)) < edge || b == nb-1) {
			j++
		}
		if j > 0 {
			h.h[b] = (w.cum[j-1] - prev) / w.total
			prev = w.cum[j-1]
		}
	}
	return h
}

// mixture is a two-component Gaussian mixture in ln(µs), μ1 ≤ μ2.
type mixture struct {
	pi, mu, vr [2]float64
}

// pdf is component c's weighted density at x.
func (m *mixture) pdf(c int, x float64) float64 {
	d := x - m.mu[c]
	return m.pi[c] * math.Exp(-d*d/(2*m.vr[c])) / math.Sqrt(2*math.Pi*m.vr[c])
}

// ashman is Ashman's D: the distance between the means in root-mean-square
// standard deviations of the two components.
func (m *mixture) ashman() float64 {
	return math.Abs(m.mu[1]-m.mu[0]) / math.Sqrt((m.vr[0]+m.vr[1])/2)
}

// bimodality returns the two modes of the sample, or nil when it has one.
func (w *weighted) bimodality() *messages.Bimodality {
	if w.empty() {
		return nil
	}
	h := w.logHistogram()
	if h == nil {
		return nil
	}
	m, ok := fitMixture(h)
	if !ok || m.ashman() <= ashmanMin {
		return nil
	}
	cut, ok := w.dip(m)
	if !ok {
		return nil
	}
	share := w.massBelow(math.Exp(cut)) / w.total
	if share < minModeShare || share > 1-minModeShare {
		return nil
	}
	return &messages.Bimodality{
		LowMode: w.ms(w.index(share / 2)), HighMode: w.ms(w.index(share + (1-share)/2)),
		LowShare: share, HighShare: 1 - share, Separation: m.ashman(),
	}
}

// dip checks that the data, not only the fit, has a valley between the two
// means: a flat, skewed or sparse distribution can give D > 2. It compares
// the sample's weight in three windows of equal width in ln(µs), centred on
// each mean and on the fitted density's lowest point between them, as
// effective counts with Poisson noise: the valley must hold, even two
// standard deviations high, under dipRatio of either peak taken two
// standard deviations low. It returns the valley's centre, the cut between
// the modes.
func (w *weighted) dip(m mixture) (float64, bool) {
	cut := m.antimode()
	hw := (m.mu[1] - m.mu[0]) / 8
	scale := w.total / w.sumW2 // weight → effective count: N_eff / N
	count := func(x float64) float64 { return w.massBetween(x-hw, x+hw) * scale }
	v := count(cut)
	v += 2 * math.Sqrt(v)
	for _, mu := range m.mu {
		p := count(mu)
		if v >= dipRatio*(p-2*math.Sqrt(p)) {
			return cut, false
		}
	}
	return cut, true
}

// massBetween is the weight of the values whose ln(µs) lies in [a, b).
func (w *weighted) massBetween(a, b float64) float64 {
	return w.massBelow(math.Exp(b)) - w.massBelow(math.Exp(a))
}

// massBelow is the weight of the values below v µs.
func (w *weighted) massBelow(v float64) float64 {
	j := sort.Search(len(w.keys), func(j int) bool { return float64(w.micros(j)) >= v })
	if j == 0 {
		return 0
	}
	return w.cum[j-1]
}

// antimode is the least dense point of the fitted mixture between its means.
func (m *mixture) antimode() float64 {
	best, bestX := math.Inf(1), (m.mu[0]+m.mu[1])/2
	for i := 1; i < antimodeGrid; i++ {
		x := m.mu[0] + (m.mu[1]-m.mu[0])*float64(i)/antimodeGrid
		if d := m.pdf(0, x) + m.pdf(1, x); d < best {
			best, bestX = d, x
		}
	}
	return bestX
}

// fitMixture fits the mixture to the histogram by EM, started from the split
// that maximizes the between-class variance (Otsu). The variances are floored
// at one bin width squared so that a component cannot collapse on one bin.
func fitMixture(h *logHist) (mixture, bool) {
	m, ok := otsu(h)
	if !ok {
		return m, false
	}
	prev := math.Inf(-1)
	for range emMaxIter {
		ll, ok := m.emStep(h)
		if !ok {
			return m, false
		}
		if ll-prev < 1e-8 {
			break
		}
		prev = ll
	}
	if m.mu[0] > m.mu[1] {
		m.pi[0], m.pi[1] = m.pi[1], m.pi[0]
		m.mu[0], m.mu[1] = m.mu[1], m.mu[0]
		m.vr[0], m.vr[1] = m.vr[1], m.vr[0]
	}
	return m, true
}

// emStep does one EM iteration and returns the log-likelihood before it.
// EM crawls on a unimodal sample and often runs all emMaxIter iterations,
// so each component's density constants are taken out of the loop.
func (m *mixture) emStep(h *logHist) (float64, bool) {
	var sw, sx, sxx, scale, decay [2]float64
	for c := range 2 {
		scale[c] = m.pi[c] / math.Sqrt(2*math.Pi*m.vr[c])
		decay[c] = -1 / (2 * m.vr[c])
	}
	ll := 0.0
	for b, wt := range h.h {
		if wt == 0 {
			continue
		}
		x := h.centre(b)
		d0, d1 := x-m.mu[0], x-m.mu[1]
		p0, p1 := scale[0]*math.Exp(d0*d0*decay[0]), scale[1]*math.Exp(d1*d1*decay[1])
		tot := p0 + p1
		if !(tot > 0) {
			continue // far out in both tails: no information
		}
		ll += wt * math.Log(tot)
		for c, r := range [2]float64{p0 / tot, p1 / tot} {
			sw[c] += wt * r
			sx[c] += wt * r * x
			sxx[c] += wt * r * x * x
		}
	}
	for c := range 2 {
		if sw[c] < 1e-9 {
			return ll, false // one component took everything: unimodal
		}
		m.pi[c] = sw[c] / (sw[0] + sw[1])
		m.mu[c] = sx[c] / sw[c]
		m.vr[c] = math.Max(sxx[c]/sw[c]-m.mu[c]*m.mu[c], logBin*logBin)
	}
	return ll, true
}

// otsu starts the mixture from the histogram's best two-class split.
func otsu(h *logHist) (mixture, bool) {
	var tw, tx float64
	for b, wt := range h.h {
		tw += wt
		tx += wt * h.centre(b)
	}
	best, split := -1.0, 0
	var w0, x0 float64
	for b := 0; b < len(h.h)-1; b++ {
		w0 += h.h[b]
		x0 += h.h[b] * h.centre(b)
		w1 := tw - w0
		if w0 <= 0 || w1 <= 0 {
			continue
		}
		d := x0/w0 - (tx-x0)/w1
		if v := w0 * w1 * d * d; v > best {
			best, split = v, b+1
		}
	}
	if best < 0 {
		return mixture{}, false
	}
	return classMoments(h, split), true
}

// classMoments is the mixture whose components are the two classes of the
// histogram split before bin split.
func classMoments(h *logHist, split int) mixture {
	var m mixture
	var sw, sx, sxx [2]float64
	for b, wt := range h.h {
		c := 0
		if b >= split {
			c = 1
		}
		x := h.centre(b)
		sw[c] += wt
		sx[c] += wt * x
		sxx[c] += wt * x * x
	}
	for c := range 2 {
		m.pi[c] = sw[c] / (sw[0] + sw[1])
		m.mu[c] = sx[c] / sw[c]
		m.vr[c] = math.Max(sxx[c]/sw[c]-m.mu[c]*m.mu[c], logBin*logBin)
	}
	return m
}
