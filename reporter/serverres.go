package reporter

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/imapload/imapload/messages"
)

// The server's resources at a step, from the figures the observers
// attached (StepResult.Server): each with how busy it was, 0 to 1, and a
// text that gives the figure. They are what the table's server line, the
// server plot and the bottleneck findings speak of.

// Resource names.
const (
	resCPU     = "CPU"
	resDisk    = "disk"
	resMemory  = "memory"
	resWorkers = "workers"
)

// resource is one resource of one endpoint at one step.
type resource struct {
	name string  // resCPU, resDisk, resMemory or resWorkers
	used float64 // how busy it was, 0 to 1
	text string  // what it was, with the figure: "CPU 1.97 of 2 cores busy (98%)"
}

// resources lists the step's resources, busiest first. When several
// endpoints describe resources (several hosts), each names its host.
func resources(s *messages.ServerResult) []resource {
	if s == nil {
		return nil
	}
	var out []resource
	described := 0
	for i := range s.Endpoints {
		if len(endpointResources(&s.Endpoints[i], "")) > 0 {
			described++
		}
	}
	for i := range s.Endpoints {
		e := &s.Endpoints[i]
		where := ""
		if described > 1 {
			where = " of " + endpointHost(e.URL)
		}
		out = append(out, endpointResources(e, where)...)
	}
	slices.SortStableFunc(out, func(a, b resource) int { return cmp.Compare(b.used, a.used) })
	return out
}

// endpointResources are the resources one endpoint's figures describe.
func endpointResources(e *messages.EndpointFigures, where string) []resource {
	var out []resource
	if busy, ok := e.Figure("node_cpu_busy_cores"); ok {
		if n, ok := e.Figure("node_cpu_cores"); ok && n.Value > 0 {
			out = append(out, resource{resCPU, busy.Value / n.Value,
				fmt.Sprintf("CPU%s %s of %s cores busy (%s)", where, cores(busy.Value), cores(n.Value), percent(busy.Value/n.Value))})
		}
	}
	if d, ok := e.Figure("node_disk_busy_ratio"); ok {
		out = append(out, resource{resDisk, d.Value, fmt.Sprintf("disk%s %s busy", where, percent(d.Value))})
	}
	if avail, ok := e.Figure("node_memory_available_bytes"); ok {
		if total, ok := e.Figure("node_memory_total_bytes"); ok && total.Value > 0 {
			used := 1 - avail.Min/total.Value
			out = append(out, resource{resMemory, used, fmt.Sprintf("memory%s %s used (%s available at the least)", where, percent(used), bytesText(avail.Min))})
		}
	}
	if busy, ok := e.Figure("imapload_imapserver_workers_busy"); ok {
		if n, ok := e.Figure("imapload_imapserver_workers"); ok && n.Value > 0 {
			text := fmt.Sprintf("the server's %s workers were busy %s of the window", cores(n.Value), percent(busy.Value/n.Value))
			if q, ok := e.Figure("imapload_imapserver_queue_length"); ok && q.Value >= 0.5 {
				text += fmt.Sprintf(" (%s commands queued on average)", cores(q.Value))
			}
			out = append(out, resource{resWorkers, busy.Value / n.Value, text})
		}
	}
	return out
}

// serverFigure is the first endpoint's figure called name.
func serverFigure(s *messages.ServerResult, name string) (messages.Figure, bool) {
	if s == nil {
		return messages.Figure{}, false
	}
	for i := range s.Endpoints {
		if f, ok := s.Endpoints[i].Figure(name); ok {
			return f, true
		}
	}
	return messages.Figure{}, false
}

// serverNote is a step's server line under it in the table and the page:
// its resources, busiest first, and what is missing, "" without figures.
func serverNote(s *messages.StepResult) string {
	if s.Server == nil {
		return ""
	}
	var parts []string
	res := resources(s.Server)
	for _, r := range res[:min(3, len(res))] {
		parts = append(parts, r.text)
	}
	if len(parts) == 0 {
		parts = append(parts, "no resource with a known capacity in the figures")
	}
	if m := s.Server.Missing; len(m) > 0 {
		parts = append(parts, "figures missing from "+strings.Join(m, ", "))
	}
	for _, e := range s.Server.Endpoints {
		if e.Failed > 0 {
			parts = append(parts, fmt.Sprintf("%s failed %d of %d scrapes", e.URL, e.Failed, e.Failed+e.Scrapes))
		}
	}
	return "server: " + strings.Join(parts, "; ")
}

// endpointHost is an endpoint URL's host:port, or the URL as it is.
func endpointHost(s string) string {
	if u, err := url.Parse(s); err == nil && u.Host != "" {
		return u.Host
	}
	return s
}

// cores formats a count of cores (or workers, or commands): "2", "1.97".
func cores(v float64) string {
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// bytesText formats a size in bytes: "9.6 GB".
func bytesText(v float64) string {
	for _, u := range []struct {
		unit string
		size float64
	}{{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"kB", 1e3}} {
		if v >= u.size {
			return strconv.FormatFloat(v/u.size, 'f', 1, 64) + " " + u.unit
		}
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + " B"
}
