package reporter

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/imapload/imapload/messages"
)

// Findings from the server's own figures: which resource was saturated at
// the knee and which was not, the headroom of the steps that held, and
// what the observers could not see. Each names its figure: no cause is
// claimed without one.

const (
	// saturatedUse is how busy a resource must be to be the bottleneck.
	saturatedUse = 0.9
	// idleUse is below what the busiest resource says the server did not
	// limit the step.
	idleUse = 0.5
	// authRise and flatRise: authentication is the bottleneck when its
	// duration rose authRise times from the first step while the IMAP
	// commands' rose less than flatRise times.
	authRise = 5
	flatRise = 2
)

// bound says what a step limited by each resource was.
var bound = map[string]string{resCPU: "CPU-bound", resDisk: "disk-bound", resMemory: "memory-bound", resWorkers: "bound by its workers"}

// serverFindings speaks of the server's figures: the knee's among ok, the
// conclusive steps, the headroom of the held ones, and every step's
// missing figures and failed endpoints.
func serverFindings(steps, ok []messages.StepResult, knee *messages.Knee, threshold float64) []string {
	var out []string
	if knee != nil {
		if i := slices.IndexFunc(ok, func(s messages.StepResult) bool { return s.Step == knee.Step }); i >= 0 {
			out = append(out, kneeServerFindings(ok, &ok[i])...)
		}
	}
	if h := headroomFinding(ok, threshold); h != "" {
		out = append(out, h)
	}
	return append(out, observerFindings(steps)...)
}

// kneeServerFindings names what limited the knee step k: the saturated
// resource, the disk behind iowait, authentication, or, with the server
// idle, something between it and the generator.
func kneeServerFindings(ok []messages.StepResult, k *messages.StepResult) []string {
	if k.Server == nil {
		return nil
	}
	at := fmt.Sprintf("at the knee (step %d, %s/s offered, %s/s delivered)", k.Step, rate(k.TargetRate), rate(k.DeliveredRate))
	var out []string
	auth := authFinding(ok, k)
	res := resources(k.Server)
	switch top, iowait := firstOr(res), iowaitText(k.Server); {
	case len(res) == 0:
	case top.used >= saturatedUse:
		out = append(out, fmt.Sprintf("%s %s%s%s: %s", at, top.text, saturatedSince(ok, k, top.name), othersText(res[1:]), bound[top.name]))
	case iowait != "":
		out = append(out, fmt.Sprintf("%s %s: the disk", at, iowait))
	case auth != "":
	case deliveriesOnly(k):
		out = append(out, deliveriesServerFinding(at, joinTexts(res)))
	case top.used < idleUse:
		out = append(out, fmt.Sprintf("%s the server was not busy (%s): the bottleneck is between them (the network, a proxy, the generator); the producers' own health: CPU up to %s cores, schedule lag P99 up to %s ms",
			at, joinTexts(res), cores(k.Health.CPUMax), ms(k.Health.LagP99Max)))
	default:
		out = append(out, fmt.Sprintf("%s no resource the figures cover was saturated (%s): they do not name the bottleneck (locks, a backend, the network)", at, joinTexts(res)))
	}
	if auth != "" {
		out = append(out, auth)
	}
	return out
}

// saturatedSince says from which step on resource name was saturated,
// when that was before the knee k (steps in ok, by rate).
func saturatedSince(ok []messages.StepResult, k *messages.StepResult, name string) string {
	for _, s := range byRate(ok) {
		if s.TargetRate >= k.TargetRate {
			break
		}
		if r, found := busiest(s.Server, name); found && r.used >= saturatedUse {
			return fmt.Sprintf(" from step %d on", s.Step)
		}
	}
	return ""
}

// busiest is the busiest resource called name of s.
func busiest(s *messages.ServerResult, name string) (resource, bool) {
	for _, r := range resources(s) {
		if r.name == name {
			return r, true
		}
	}
	return resource{}, false
}

// iowaitText is a host's waiting for the disk, when it is worth naming
// (at least half a core and a quarter of the CPUs), beside its CPU and
// disk: "CPU 0.70 of 2 cores busy (35%) while iowait was 0.80 cores
// (disk 60% busy)".
func iowaitText(s *messages.ServerResult) string {
	for i := range s.Endpoints {
		e := &s.Endpoints[i]
		w, ok := e.Figure("node_cpu_iowait_cores")
		n, ok2 := e.Figure("node_cpu_cores")
		if !ok || !ok2 || w.Value < 0.5 || w.Value < n.Value/4 {
			continue
		}
		text := fmt.Sprintf("iowait was %s cores", cores(w.Value))
		for _, r := range endpointResources(e, "") {
			switch r.name {
			case resCPU:
				text = r.text + " while " + text
			case resDisk:
				text += " (" + r.text + ")"
			}
		}
		return text
	}
	return ""
}

// authFinding compares Dovecot's authentication and IMAP command
// durations at the knee with the first step's: authentication is named
// when it alone slowed down.
func authFinding(ok []messages.StepResult, k *messages.StepResult) string {
	for _, name := range []string{"dovecot_auth_requests_duration_seconds", "dovecot_logins_duration_seconds"} {
		knee, found := serverFigure(k.Server, name)
		if !found {
			continue
		}
		for _, s := range byRate(ok) {
			base, found := serverFigure(s.Server, name)
			if !found || !(base.Value > 0) || s.Step == k.Step {
				continue
			}
			rise := knee.Value / base.Value
			imap := imapRise(s.Server, k.Server)
			if rise < authRise || imap >= flatRise {
				return ""
			}
			return fmt.Sprintf("%s rose %s× (%s → %s ms) from step %d to the knee (step %d) while %s: authentication",
				strings.ReplaceAll(strings.TrimPrefix(name, "dovecot_"), "_", " "), riseText(rise), ms(1000*base.Value), ms(1000*knee.Value),
				s.Step, k.Step, imapWords(imap))
		}
	}
	return ""
}

// imapRise is how many times the IMAP commands' mean duration grew, 0 when
// it is not known.
func imapRise(base, knee *messages.ServerResult) float64 {
	b, ok := serverFigure(base, "dovecot_imap_commands_duration_seconds")
	k, ok2 := serverFigure(knee, "dovecot_imap_commands_duration_seconds")
	if !ok || !ok2 || !(b.Value > 0) {
		return 0
	}
	return k.Value / b.Value
}

func imapWords(rise float64) string {
	if rise == 0 {
		return "the IMAP commands' duration is not in the figures"
	}
	return fmt.Sprintf("imap command duration did not (%s×)", riseText(rise))
}

// headroomFinding says, for the steps that held, how busy the busiest
// resource was: "400/s held at 41% CPU".
func headroomFinding(ok []messages.StepResult, threshold float64) string {
	var parts []string
	for _, s := range byRate(ok) {
		if stepVerdict(s, threshold) != messages.VerdictHeld {
			continue
		}
		if r, ok := headroomOf(resources(s.Server)); ok {
			parts = append(parts, fmt.Sprintf("%s/s held at %s %s", rate(s.TargetRate), percent(r.used), headroomWords[r.name]))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "headroom (the busiest server resource of each held step): " + strings.Join(parts[max(0, len(parts)-5):], ", ")
}

// headroomOf is the busiest resource that grows with the load: memory in
// use only when the figures have nothing else.
func headroomOf(res []resource) (resource, bool) {
	for _, r := range res {
		if r.name != resMemory {
			return r, true
		}
	}
	return firstOr(res), len(res) > 0
}

var headroomWords = map[string]string{resCPU: "CPU", resDisk: "disk busy", resMemory: "memory used", resWorkers: "workers busy"}

// observerFindings names, across steps, the observers whose figures did
// not arrive and the endpoints whose scrapes failed.
func observerFindings(steps []messages.StepResult) []string {
	missing, failed := map[string][]int{}, map[string][]int{}
	lastErr, order := map[string]string{}, []string{}
	for _, s := range steps {
		if s.Server == nil {
			continue
		}
		for _, m := range s.Server.Missing {
			missing[m] = append(missing[m], s.Step)
		}
		for _, e := range s.Server.Endpoints {
			if e.Failed == 0 {
				continue
			}
			if _, seen := failed[e.URL]; !seen {
				order = append(order, e.URL)
			}
			failed[e.URL], lastErr[e.URL] = append(failed[e.URL], s.Step), e.Error
		}
	}
	var out []string
	for _, m := range slices.Sorted(maps.Keys(missing)) {
		out = append(out, fmt.Sprintf("observer %s announced %s but its server figures did not arrive in time: those steps lack them", m, stepsWord(missing[m])))
	}
	for _, u := range order {
		out = append(out, fmt.Sprintf("endpoint %s failed scrapes at %s (last: %s): its figures cover only the scrapes that answered", u, stepsWord(failed[u]), clip(lastErr[u], 120)))
	}
	return out
}

func firstOr(res []resource) resource {
	if len(res) == 0 {
		return resource{}
	}
	return res[0]
}

func othersText(res []resource) string {
	if len(res) == 0 {
		return ""
	}
	return "; " + joinTexts(res[:min(2, len(res))])
}

func joinTexts(res []resource) string {
	texts := make([]string, len(res))
	for i, r := range res {
		texts[i] = r.text
	}
	return strings.Join(texts, ", ")
}

// riseText formats how many times a figure grew: "40", "1.1".
func riseText(v float64) string {
	if v >= 10 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
