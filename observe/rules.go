package observe

import (
	"math"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// What is derived from a scrape. Each rule reads one metric family and
// gives readings of one figure, the figure's name carrying its unit as
// Prometheus names do. Counters become rates over the window, gauges
// min/mean/max over its scrapes (see endpoint).

// kind says how a figure's readings are folded over the window.
type kind uint8

const (
	counterKind kind = iota // a rate per second, resets handled
	gaugeKind               // min, mean and max
)

// reduce says how a figure's series (CPUs, disks, label sets) combine.
type reduce uint8

const (
	sumOf reduce = iota // the figure is their sum: cores busy over all CPUs
	maxOf               // the figure is the busiest: the busiest disk
)

// reading is one series' value of a figure in one scrape.
type reading struct {
	figure string
	kind   kind
	reduce reduce
	hidden bool // only an input of a mean, not published
	series string
	value  float64
}

// meanRule makes figure name from two counter figures: num's increase over
// den's (Dovecot's summed durations over the number of events).
type meanRule struct{ name, num, den string }

// rule derives one figure from one family; series names the label that
// tells its series apart ("" for a family of one series), skip leaves
// series out (virtual disks, the loopback interface).
type rule struct {
	family, figure string
	kind           kind
	reduce         reduce
	series         string
	skip           func(series string) bool
}

// fixedRules are node_exporter's figures (but CPU, see cpuReadings) and
// the embedded test server's.
var fixedRules = []rule{
	{family: "node_load1", figure: "node_load1", kind: gaugeKind},
	{family: "node_procs_running", figure: "node_procs_running", kind: gaugeKind},
	{family: "node_memory_MemAvailable_bytes", figure: "node_memory_available_bytes", kind: gaugeKind},
	{family: "node_memory_MemTotal_bytes", figure: "node_memory_total_bytes", kind: gaugeKind},
	{family: "node_disk_io_time_seconds_total", figure: "node_disk_busy_ratio", reduce: maxOf, series: "device", skip: virtualDisk},
	{family: "node_disk_read_bytes_total", figure: "node_disk_read_bytes_per_second", series: "device", skip: stackedDisk},
	{family: "node_disk_written_bytes_total", figure: "node_disk_written_bytes_per_second", series: "device", skip: stackedDisk},
	{family: "node_network_receive_bytes_total", figure: "node_network_receive_bytes_per_second", series: "device", skip: loopback},
	{family: "node_network_transmit_bytes_total", figure: "node_network_transmit_bytes_per_second", series: "device", skip: loopback},
	{family: "node_context_switches_total", figure: "node_context_switches_per_second"},
	{family: "imapload_imapserver_workers", figure: "imapload_imapserver_workers", kind: gaugeKind},
	{family: "imapload_imapserver_worker_busy_seconds_total", figure: "imapload_imapserver_workers_busy"},
	{family: "imapload_imapserver_queue_length", figure: "imapload_imapserver_queue_length", kind: gaugeKind},
	{family: "imapload_imapserver_connections", figure: "imapload_imapserver_connections", kind: gaugeKind},
	{family: "imapload_imapserver_commands_total", figure: "imapload_imapserver_commands_per_second"},
	{family: "imapload_imapserver_logins_total", figure: "imapload_imapserver_logins_per_second"},
}

// virtualDisk reports a block device that is no disk (RAM disks, loop
// devices, floppies, CD-ROMs): its busy time says nothing of the host.
func virtualDisk(dev string) bool {
	for _, p := range []string{"ram", "zram", "loop", "fd", "sr"} {
		if rest, ok := strings.CutPrefix(dev, p); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			return true
		}
	}
	return false
}

// stackedDisk also leaves out device-mapper and RAID devices, whose bytes
// the disks below them count again.
func stackedDisk(dev string) bool {
	return virtualDisk(dev) || strings.HasPrefix(dev, "dm-") || strings.HasPrefix(dev, "md")
}

func loopback(dev string) bool { return dev == "lo" }

// readings appends to out what a scrape's families give: the fixed rules,
// the host's CPU, Dovecot's metrics by name, and the families named in
// keep as they are. It returns the mean rules the families call for.
func readings(fams map[string]*dto.MetricFamily, keep []string, out []reading) ([]reading, []meanRule) {
	for _, r := range fixedRules {
		if f := fams[r.family]; f != nil {
			out = r.read(f, out)
		}
	}
	out = cpuReadings(fams["node_cpu_seconds_total"], out)
	out, means := dovecotReadings(fams, out)
	for _, name := range keep {
		var m []meanRule
		out, m = keptReadings(name, fams[name], out)
		means = append(means, m...)
	}
	return out, means
}

func (r rule) read(f *dto.MetricFamily, out []reading) []reading {
	for _, m := range f.GetMetric() {
		s := label(m, r.series)
		if r.skip != nil && r.skip(s) {
			continue
		}
		out = appendReading(out, reading{figure: r.figure, kind: r.kind, reduce: r.reduce, series: s, value: value(f, m)})
	}
	return out
}

// cpuModes are the modes of node_cpu_seconds_total given a figure of their
// own; busy is every mode but idle, iowait and steal (time the CPU was
// waiting, or taken by the hypervisor).
var cpuModes = []string{"user", "system", "iowait", "steal"}

// cpuReadings gives the host's CPU in cores: busy, by mode, and the number
// of CPUs (a gauge counting the idle series, one per CPU).
func cpuReadings(f *dto.MetricFamily, out []reading) []reading {
	for _, m := range f.GetMetric() {
		cpu, mode, v := label(m, "cpu"), label(m, "mode"), value(f, m)
		if slices.Contains(cpuModes, mode) {
			out = appendReading(out, reading{figure: "node_cpu_" + mode + "_cores", series: cpu, value: v})
		}
		switch mode {
		case "idle":
			out = appendReading(out, reading{figure: "node_cpu_cores", kind: gaugeKind, series: cpu, value: 1})
		case "iowait", "steal":
		default:
			out = appendReading(out, reading{figure: "node_cpu_busy_cores", series: cpu + "/" + mode, value: v})
		}
	}
	return out
}

// dovecotReadings maps Dovecot's statistics by name: each `metric NAME`
// of its config is exported as the counters dovecot_NAME_total (events)
// and dovecot_NAME_duration_seconds_total (their summed duration), which
// become dovecot_NAME_per_second and dovecot_NAME_duration_seconds, the
// mean duration of one event.
func dovecotReadings(fams map[string]*dto.MetricFamily, out []reading) ([]reading, []meanRule) {
	var names []string
	for name, f := range fams {
		if strings.HasPrefix(name, "dovecot_") && strings.HasSuffix(name, "_total") && f.GetType() == dto.MetricType_COUNTER {
			names = append(names, name)
		}
	}
	slices.Sort(names) // the same figures at the caps, whatever the map's order
	var means []meanRule
	for _, name := range names {
		base := strings.TrimSuffix(name, "_total")
		if event, ok := strings.CutSuffix(base, "_duration_seconds"); ok {
			out = sumSeries(fams[name], name, true, out)
			means = append(means, meanRule{name: base, num: name, den: event + "_per_second"})
			continue
		}
		out = sumSeries(fams[name], base+"_per_second", false, out)
	}
	return out, means
}

// keptReadings keeps the family named with --metric as it is, summed over
// its series: a counter as a rate, a gauge (or untyped) as min/mean/max, a
// summary or histogram as the mean of its observations (NAME) and their
// rate (NAME_count).
func keptReadings(name string, f *dto.MetricFamily, out []reading) ([]reading, []meanRule) {
	switch f.GetType() {
	case dto.MetricType_COUNTER:
		return sumSeries(f, name, false, out), nil
	case dto.MetricType_GAUGE, dto.MetricType_UNTYPED:
		for _, m := range f.GetMetric() {
			out = appendReading(out, reading{figure: name, kind: gaugeKind, series: seriesKey(m), value: value(f, m)})
		}
		return out, nil
	case dto.MetricType_SUMMARY, dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		for _, m := range f.GetMetric() {
			sum, count := observations(m)
			key := seriesKey(m)
			out = appendReading(out, reading{figure: name + "_sum", hidden: true, series: key, value: sum})
			out = appendReading(out, reading{figure: name + "_count", series: key, value: count})
		}
		return out, []meanRule{{name: name, num: name + "_sum", den: name + "_count"}}
	}
	return out, nil
}

// sumSeries gives one counter figure summing every series of f.
func sumSeries(f *dto.MetricFamily, figure string, hidden bool, out []reading) []reading {
	for _, m := range f.GetMetric() {
		out = appendReading(out, reading{figure: figure, hidden: hidden, series: seriesKey(m), value: value(f, m)})
	}
	return out
}

// appendReading appends r unless its value is not a finite number (a NaN
// gauge): figures are sums and means, which one NaN would spoil.
func appendReading(out []reading, r reading) []reading {
	if math.IsNaN(r.value) || math.IsInf(r.value, 0) {
		return out
	}
	return append(out, r)
}

// value is a counter's, gauge's or untyped metric's value.
func value(f *dto.MetricFamily, m *dto.Metric) float64 {
	switch f.GetType() {
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue()
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue()
	}
	return m.GetUntyped().GetValue()
}

func observations(m *dto.Metric) (sum, count float64) {
	if s := m.GetSummary(); s != nil {
		return s.GetSampleSum(), float64(s.GetSampleCount())
	}
	h := m.GetHistogram()
	return h.GetSampleSum(), float64(h.GetSampleCount())
}

// label is m's value of the label called name, "" when it has none.
func label(m *dto.Metric, name string) string {
	if name == "" {
		return ""
	}
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// seriesKey tells m's series apart from the family's others: its labels.
func seriesKey(m *dto.Metric) string {
	var b strings.Builder
	for _, l := range m.GetLabel() {
		b.WriteString(l.GetName())
		b.WriteByte('=')
		b.WriteString(l.GetValue())
		b.WriteByte(',')
	}
	return b.String()
}
