package fleetbench

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// workload stands in for a producer's sessions: the commands of its share
// of the rate, drawn from the default mix, each with a service time of its
// phase and a schedule lag, recorded by the real recorder as a producer's
// sessions record them. Every LOGOUT is followed by a reconnect (a dial and
// a LOGIN), as a session's is.
type workload struct {
	rate   float64 // scheduled commands per second
	carry  float64 // the fraction of a command owed from the last interval
	rng    *rand.Rand
	phases []messages.Phase
	cum    []float64 // cumulative weights of phases
}

func newWorkload(rate float64, seed uint64) *workload {
	w := &workload{rate: rate, rng: rand.New(rand.NewPCG(seed, 0x776b6c64))}
	mix := messages.DefaultMix()
	sum := 0.0
	for _, p := range messages.Phases() {
		if weight, ok := mix[p.String()]; ok {
			sum += weight
			w.phases, w.cum = append(w.phases, p), append(w.cum, sum)
		}
	}
	for i := range w.cum {
		w.cum[i] /= sum
	}
	return w
}

// record records the commands whose intended start falls in [from, to),
// offsets from the start of the measurement window; nothing before it.
func (w *workload) record(rec *recorder.Recorder, from, to time.Duration) {
	from = max(from, 0)
	if to <= from {
		return
	}
	n := w.rate*(to-from).Seconds() + w.carry
	count := int(n)
	w.carry = n - float64(count)
	for range count {
		p := w.phases[min(pick(w.cum, w.rng.Float64()), len(w.phases)-1)]
		w.command(rec, p)
		if p == messages.Logout {
			w.command(rec, messages.Dial)
			w.command(rec, messages.Login)
		}
	}
}

// pick is the index of the first cumulative weight at or above u.
func pick(cum []float64, u float64) int {
	i, _ := slices.BinarySearch(cum, u)
	return i
}

// command records one successful command of phase p: its lag, its service
// time and its response time (lag plus service, measured from the intended
// start). Only scheduled phases count as scheduled commands.
func (w *workload) command(rec *recorder.Recorder, p messages.Phase) {
	lag := time.Duration(w.rng.ExpFloat64() * 100 * float64(time.Microsecond))
	service := time.Duration(serviceMicros(w.rng, p) * float64(time.Microsecond))
	rec.Record(p, lag+service, service)
	if p.Scheduled() {
		rec.Lag(lag)
		rec.Scheduled(true)
	}
}

// medianMicros is each phase's median service time against a healthy
// server, µs.
var medianMicros = [messages.NumPhases]float64{
	messages.Dial: 400, messages.Login: 300, messages.List: 1000, messages.Select: 1500,
	messages.Fetch: 2500, messages.Store: 1200, messages.Append: 2000, messages.Logout: 500,
}

// serviceMicros draws a service time: lognormal around the phase's median
// with a Pareto tail (α 1.5) on 2% of the commands; a LOGIN misses the
// server's password cache one time in five and pays a password hash (40 ms).
func serviceMicros(rng *rand.Rand, p messages.Phase) float64 {
	median := medianMicros[p]
	if p == messages.Login && rng.Float64() < 0.2 {
		median = 40_000
	}
	v := median * math.Exp(0.5*rng.NormFloat64())
	if rng.Float64() < 0.02 {
		v = 5 * median / math.Pow(1-rng.Float64(), 1/1.5)
	}
	return math.Max(1, v)
}
