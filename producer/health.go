package producer

import (
	"syscall"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// minCPUWindow is the shortest span CPU use is measured over: over a few
// milliseconds getrusage's accounting is too coarse to mean anything.
const minCPUWindow = 100 * time.Millisecond

// cpuMeter measures the process's CPU use (user + system) per wall second
// between two readings, from getrusage(2).
type cpuMeter struct {
	cpu  time.Duration
	wall time.Time
	last float64 // the previous reading
}

func newCPUMeter() cpuMeter { return cpuMeter{cpu: processCPU(), wall: time.Now()} }

// read returns the cores used since the previous read, or the previous
// reading again if that was less than minCPUWindow ago.
func (m *cpuMeter) read() float64 {
	cpu, wall := processCPU(), time.Now()
	used, elapsed := cpu-m.cpu, wall.Sub(m.wall)
	if elapsed < minCPUWindow {
		return m.last
	}
	m.cpu, m.wall, m.last = cpu, wall, coresUsed(used, elapsed)
	return m.last
}

// coresUsed is CPU time per wall time, 0 when either is not positive.
func coresUsed(cpu, wall time.Duration) float64 {
	if cpu <= 0 || wall <= 0 {
		return 0
	}
	return min(cpu.Seconds()/wall.Seconds(), 1e4)
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cutter cuts a step's successive batches with contiguous From/To bounds and
// the producer's health. It is used by one goroutine at a time.
type cutter struct {
	rec  *recorder.Recorder
	tl   timeline
	env  *sessionEnv
	cpu  cpuMeter
	from time.Duration // To of the previous batch
}

func newCutter(rec *recorder.Recorder, env *sessionEnv) *cutter {
	return &cutter{rec: rec, tl: env.tl, env: env, cpu: newCPUMeter(), from: -env.tl.warmup}
}

// cut returns the batch of everything recorded since the previous cut.
func (c *cutter) cut(now time.Time, final bool) *messages.SampleBatch {
	to := max(c.tl.offset(now), c.from)
	h := messages.Health{CPU: c.cpu.read(), Sessions: uint32(max(c.env.open.Load(), 0))}
	b := c.rec.Cut(c.from, to, final, h)
	c.from = to
	return b
}
