package producer

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestParseSchedstat(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want time.Duration
		ok   bool
	}{
		{"three fields", "224578953 12443271 422\n", 12443271, true},
		{"no wait yet", "76497 0 2", 0, true},
		{"one field", "224578953", 0, false},
		{"empty", "", 0, false},
		{"not a number", "1 x 2", 0, false},
		{"negative", "1 -5 2", 0, false},
		{"beyond a Duration", "1 18446744073709551615 2", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := parseSchedstat(tt.in); got != tt.want || ok != tt.ok {
				t.Errorf("parseSchedstat(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParsePressure(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want time.Duration
		ok   bool
	}{
		{"host", "some avg10=1.82 avg60=11.66 avg300=8.96 total=40181650\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
			40181650 * time.Microsecond, true},
		{"some line only (older kernels)", "some avg10=0.00 avg60=0.00 avg300=0.00 total=7", 7 * time.Microsecond, true},
		{"full before some", "full avg10=0.00 total=9\nsome avg10=0.00 total=3\n", 3 * time.Microsecond, true},
		{"no total", "some avg10=1.82 avg60=11.66\n", 0, false},
		{"bad total", "some total=x\n", 0, false},
		{"empty", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := parsePressure(tt.in); got != tt.want || ok != tt.ok {
				t.Errorf("parsePressure(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParseStatField(t *testing.T) {
	const v2 = "usage_usec 185392862\nuser_usec 137663248\nsystem_usec 47729613\nnr_periods 10\nnr_throttled 2\nthrottled_usec 5500\n"
	const v1 = "nr_periods 0\nnr_throttled 0\nthrottled_time 1200\nnr_bursts 0\nburst_time 0\n"
	tests := []struct {
		name, in, key string
		unit          time.Duration
		want          time.Duration
		ok            bool
	}{
		{"v2 throttled_usec", v2, "throttled_usec", time.Microsecond, 5500 * time.Microsecond, true},
		{"v1 throttled_time", v1, "throttled_time", time.Nanosecond, 1200, true},
		{"v2 file without the cpu controller", "usage_usec 1\nuser_usec 1\nsystem_usec 0\n", "throttled_usec", time.Microsecond, 0, false},
		{"key is a prefix of another", "throttled_usec_x 5\n", "throttled_usec", time.Microsecond, 0, false},
		{"empty", "", "throttled_usec", time.Microsecond, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := parseStatField(tt.in, tt.key, tt.unit); got != tt.want || ok != tt.ok {
				t.Errorf("parseStatField(%q, %q) = %v, %v; want %v, %v", tt.in, tt.key, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestThrottleFiles(t *testing.T) {
	const hybrid = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/9d25\n3:cpuset:/\n2:cpuacct:/\n1:cpu:/\n0::/\n"
	tests := []struct {
		name, in string
		want     []string
	}{
		{"cgroup v2", "0::/user.slice/session-1.scope\n", []string{
			"/sys/fs/cgroup/user.slice/session-1.scope/cpu.stat throttled_usec",
			"/sys/fs/cgroup/unified/user.slice/session-1.scope/cpu.stat throttled_usec"}},
		{"hybrid: cpu and cpuacct apart, cpuset is not cpu", hybrid, []string{
			"/sys/fs/cgroup/cpu.stat throttled_usec", "/sys/fs/cgroup/unified/cpu.stat throttled_usec",
			"/sys/fs/cgroup/cpu/cpu.stat throttled_time", "/sys/fs/cgroup/cpu,cpuacct/cpu.stat throttled_time"}},
		{"v1 cpu,cpuacct", "5:cpu,cpuacct:/docker/abc\n3:cpuset:/docker/abc\n", []string{
			"/sys/fs/cgroup/cpu/docker/abc/cpu.stat throttled_time",
			"/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.stat throttled_time"}},
		{"a path with a colon", "0::/a:b\n", []string{
			"/sys/fs/cgroup/a:b/cpu.stat throttled_usec", "/sys/fs/cgroup/unified/a:b/cpu.stat throttled_usec"}},
		{"no cpu hierarchy", "3:cpuset:/\n2:cpuacct:/\n", nil},
		{"garbage", "nonsense\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range throttleFiles(tt.in) {
				got = append(got, f.path+" "+f.key)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("throttleFiles(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// script is a host counter that returns its values in turn, then fails.
type script struct {
	values []time.Duration
	calls  int
}

func (s *script) read() (time.Duration, bool) {
	s.calls++
	if s.calls > len(s.values) {
		return 0, false
	}
	return s.values[s.calls-1], true
}

func TestHostCounterFailsOnce(t *testing.T) {
	s := &script{values: []time.Duration{5}}
	c := &hostCounter{read: s.read}
	for i, want := range []bool{true, false, false, false} {
		if _, ok := c.total(); ok != want {
			t.Errorf("total() #%d ok = %v, want %v", i+1, ok, want)
		}
	}
	if s.calls != 2 {
		t.Errorf("the counter was read %d times, want 2: never again after it failed", s.calls)
	}
	var unavailable *hostCounter
	if v, ok := unavailable.total(); v != 0 || ok {
		t.Errorf("nil hostCounter total() = %v, %v; want 0, false", v, ok)
	}
}

// TestHostMeterShares feeds scripted counters to a meter: shares are deltas
// per wall time, pressure and throttling are clamped to 1, a counter that
// goes back or fails reads zero, and a reading within minCPUWindow repeats
// the previous one.
func TestHostMeterShares(t *testing.T) {
	sec := time.Second
	run := &script{values: []time.Duration{0, 3 * sec / 2, sec, 2 * sec}} // 1.5 threads waiting, then back
	psi := &script{values: []time.Duration{10 * sec, 10*sec + sec/4, 13 * sec}}
	thr := &script{values: []time.Duration{sec}} // fails at the 2nd read
	files := &hostFiles{}
	files.runDelay.read, files.pressure.read, files.throttled.read = run.read, psi.read, thr.read
	t0 := time.Unix(1000, 0)
	m := newHostMeter(files, t0)
	steps := []struct {
		at   time.Duration
		want hostShares
	}{
		{sec, hostShares{runDelay: 1.5, pressure: 0.25}},
		{sec + minCPUWindow/2, hostShares{runDelay: 1.5, pressure: 0.25}}, // too soon: the same again
		{2 * sec, hostShares{runDelay: 0, pressure: 1}},                   // went back; 2.75 s of pressure in 1 s
		{3 * sec, hostShares{runDelay: 1}},                                // pressure's script ended: off
	}
	for _, st := range steps {
		if got := m.read(t0.Add(st.at)); got != st.want {
			t.Errorf("hostMeter.read(+%v) = %+v, want %+v", st.at, got, st.want)
		}
	}
	if thr.calls != 2 || psi.calls != 4 {
		t.Errorf("throttle read %d times, pressure %d; want 2 and 4 (no read after a failure)", thr.calls, psi.calls)
	}
}

// TestHostMeterRealFiles reads this host's own files: whatever they hold,
// the shares are finite, non-negative, and the bounded ones at most 1.
func TestHostMeterRealFiles(t *testing.T) {
	files := newHostFiles()
	for name, c := range map[string]*hostCounter{"run delay": &files.runDelay, "pressure": &files.pressure,
		"throttled": &files.throttled} {
		v, ok := c.total()
		t.Logf("%s: %v (available %v)", name, v, ok)
	}
	t0 := time.Now()
	m := newHostMeter(files, t0)
	got := m.read(t0.Add(time.Second))
	for name, v := range map[string]float64{"RunDelay": got.runDelay, "Pressure": got.pressure, "Throttled": got.throttled} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			t.Errorf("%s = %v, want finite and ≥ 0", name, v)
		}
	}
	if got.pressure > 1 || got.throttled > 1 {
		t.Errorf("Pressure, Throttled = %v, %v; want at most 1", got.pressure, got.throttled)
	}
}
