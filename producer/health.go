package producer

import (
	"os"
	"os/signal"
	"runtime"
	"sync/atomic"
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
	m.cpu, m.wall, m.last = cpu, wall, perWall(used, elapsed)
	return m.last
}

// perWall is time spent per wall time (for CPU time: cores used), 0 when
// either is not positive.
func perWall(d, wall time.Duration) float64 {
	if d <= 0 || wall <= 0 {
		return 0
	}
	return min(d.Seconds()/wall.Seconds(), 1e4)
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// hostShares say how much of the wall time between two readings the host
// kept the producer off the CPU; see messages.Health.
type hostShares struct {
	runDelay  float64 // threads waiting on a run queue, per wall second
	pressure  float64 // share of time some task of the host waited for a CPU, [0, 1]
	throttled float64 // share of time the cgroup's quota throttled it, [0, 1]
}

// hostDelta follows one host counter from reading to reading.
type hostDelta struct {
	c    *hostCounter
	prev time.Duration
}

// next returns the growth since the previous reading, 0 when the counter is
// unavailable or went back (a thread's waits leave the sum when it exits).
func (d *hostDelta) next() time.Duration {
	v, ok := d.c.total()
	if !ok {
		return 0
	}
	grew := max(v-d.prev, 0)
	d.prev = v
	return grew
}

// hostMeter turns the host's counters into shares of the wall time between
// two readings, over the same minimum window as cpuMeter.
type hostMeter struct {
	runDelay, pressure, throttled hostDelta
	wall                          time.Time
	last                          hostShares
}

// newHostMeter starts measuring at now; files may be nil (all zero).
func newHostMeter(files *hostFiles, now time.Time) hostMeter {
	if files == nil {
		files = &hostFiles{}
	}
	m := hostMeter{runDelay: hostDelta{c: &files.runDelay}, pressure: hostDelta{c: &files.pressure},
		throttled: hostDelta{c: &files.throttled}, wall: now}
	m.runDelay.next()
	m.pressure.next()
	m.throttled.next()
	return m
}

// read returns the shares since the previous read, or the previous ones
// again if that was less than minCPUWindow before now.
func (m *hostMeter) read(now time.Time) hostShares {
	elapsed := now.Sub(m.wall)
	if elapsed < minCPUWindow {
		return m.last
	}
	m.wall = now
	m.last = hostShares{
		runDelay:  perWall(m.runDelay.next(), elapsed),
		pressure:  min(perWall(m.pressure.next(), elapsed), 1),
		throttled: min(perWall(m.throttled.next(), elapsed), 1),
	}
	return m.last
}

// contWatch counts the SIGCONTs the process receives while a producer runs:
// a process that gets one was stopped (SIGSTOP, SIGTSTP, a debugger) and
// could not run at all for a while, which no run-queue counter shows.
type contWatch struct {
	n    atomic.Uint64
	sig  chan os.Signal
	done chan struct{}
}

// watchConts starts counting; stop ends it.
func watchConts() *contWatch {
	w := &contWatch{sig: make(chan os.Signal, 1), done: make(chan struct{})}
	signal.Notify(w.sig, syscall.SIGCONT)
	go w.run()
	return w
}

func (w *contWatch) run() {
	defer close(w.done)
	for range w.sig {
		w.n.Add(1)
	}
}

// stop stops the notifications and waits for the counting goroutine. After
// signal.Stop returns no signal is sent on w.sig, so it can be closed.
func (w *contWatch) stop() {
	signal.Stop(w.sig)
	close(w.sig)
	<-w.done
}

// count is the SIGCONTs so far; 0 on a nil watch.
func (w *contWatch) count() uint64 {
	if w == nil {
		return 0
	}
	return w.n.Load()
}

// hostWatch is what a producer watches of its host for as long as it runs,
// for the health of every batch of its steps. A nil *hostWatch watches
// nothing: every field of its health reads zero.
type hostWatch struct {
	files *hostFiles
	conts *contWatch
}

// watchHost locates the host's counters and starts counting SIGCONTs.
func watchHost() *hostWatch { return &hostWatch{files: newHostFiles(), conts: watchConts()} }

func (h *hostWatch) stop() { h.conts.stop() }

// cutter cuts a step's successive batches with contiguous From/To bounds and
// the producer's health. It is used by one goroutine at a time.
type cutter struct {
	rec   *recorder.Recorder
	tl    timeline
	env   *sessionEnv
	cpu   cpuMeter
	host  hostMeter
	conts *contWatch
	seen  uint64        // SIGCONTs counted at the previous cut
	from  time.Duration // To of the previous batch
}

func newCutter(rec *recorder.Recorder, env *sessionEnv, host *hostWatch) *cutter {
	c := &cutter{rec: rec, tl: env.tl, env: env, cpu: newCPUMeter(), from: -env.tl.warmup}
	var files *hostFiles
	if host != nil {
		files, c.conts = host.files, host.conts
	}
	c.host, c.seen = newHostMeter(files, time.Now()), c.conts.count()
	return c
}

// cut returns the batch of everything recorded since the previous cut.
func (c *cutter) cut(now time.Time, final bool) *messages.SampleBatch {
	to := max(c.tl.offset(now), c.from)
	b := c.rec.Cut(c.from, to, final, c.health(now))
	if final {
		b.Setup = c.env.setups.result()
	}
	c.from = to
	return b
}

// health is what the cutter knows of the producer since the previous cut.
// CPULimit is GOMAXPROCS, which the runtime caps by the cgroup's CPU quota.
func (c *cutter) health(now time.Time) messages.Health {
	hs := c.host.read(now)
	conts := c.conts.count()
	stopped := conts != c.seen
	c.seen = conts
	held, least, drops := c.env.held.cut(now)
	return messages.Health{
		Held: held, HeldMin: least, HeldDrops: drops,
		CPU: c.cpu.read(), CPULimit: float64(runtime.GOMAXPROCS(0)),
		Sessions: uint32(max(c.env.open.Load(), 0)),
		RunDelay: hs.runDelay, Pressure: hs.pressure, Throttled: hs.throttled, Stopped: stopped,
		Local: c.env.cfg.local,
	}
}
