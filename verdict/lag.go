package verdict

import (
	"fmt"
	"slices"
	"strings"

	"github.com/imapload/imapload/messages"
)

// lagCodes are the causes of a producer falling behind, in report order.
var lagCodes = []string{messages.ReasonGeneratorSaturated, messages.ReasonHostOverloaded, messages.ReasonGeneratorStalled}

// LagCause names why a producer whose schedule lag was too high fell behind,
// from the health it reported (the highest of its lagging batches):
//
//   - stopped and continued (SIGSTOP, SIGCONT): generator_stalled;
//   - its cgroup throttled it: host_overloaded;
//   - it used 80% or more of the CPU it may use: generator_saturated;
//   - its threads waited for a CPU, or the host's CPU pressure was high:
//     host_overloaded;
//   - a producer too old to say (no CPU limit reported): generator_saturated;
//   - none of these (no CPU used, none waited for): generator_stalled.
func LagCause(h messages.Health) string {
	switch {
	case h.Stopped:
		return messages.ReasonGeneratorStalled
	case h.Throttled >= throttledShare:
		return messages.ReasonHostOverloaded
	case h.CPULimit > 0 && h.CPU >= cpuBound*h.CPULimit:
		return messages.ReasonGeneratorSaturated
	case h.RunDelay >= runDelayShare || h.Pressure >= pressureShare:
		return messages.ReasonHostOverloaded
	case h.CPULimit == 0:
		return messages.ReasonGeneratorSaturated
	default:
		return messages.ReasonGeneratorStalled
	}
}

// lagged describes the producers of r that fell behind for cause code, or "".
func lagged(r messages.StepResult, code string) string {
	var who []string
	for _, p := range r.PerProducer {
		if p.Saturated && causeOf(p) == code {
			who = append(who, evidence(p))
		}
	}
	if len(who) == 0 && code == messages.ReasonGeneratorSaturated && r.GeneratorSaturated && !anyBreakdown(r) {
		who = append(who, fmt.Sprintf("schedule lag P99 up to %.1f ms", r.Health.LagP99Max))
	}
	if len(who) == 0 {
		return ""
	}
	return "fell behind its schedule: " + strings.Join(who, "; ")
}

// causeOf is a lagging producer's cause; results from older aggregators
// carry none and count as saturated.
func causeOf(p messages.ProducerBreakdown) string {
	if !slices.Contains(lagCodes, p.LagCause) {
		return messages.ReasonGeneratorSaturated
	}
	return p.LagCause
}

func anyBreakdown(r messages.StepResult) bool {
	for _, p := range r.PerProducer {
		if p.Saturated {
			return true
		}
	}
	return false
}

// evidence says what a lagging producer reported.
func evidence(p messages.ProducerBreakdown) string {
	s := fmt.Sprintf("%s lag P99 %.1f ms at %.2f", p.Producer, p.LagP99, p.CPU)
	if p.CPULimit > 0 {
		s += fmt.Sprintf(" of %.0f", p.CPULimit)
	}
	s += " cores"
	if p.RunDelay > 0 {
		s += fmt.Sprintf(", waited for a CPU %.0f%% of the time", 100*p.RunDelay)
	}
	if p.Pressure > 0 {
		s += fmt.Sprintf(", host CPU pressure %.0f%%", 100*p.Pressure)
	}
	if p.Throttled > 0 {
		s += fmt.Sprintf(", throttled %.0f%% of the time", 100*p.Throttled)
	}
	if p.Stopped {
		s += ", stopped and continued (SIGSTOP/SIGCONT)"
	}
	return s
}

// localRemedy is what to do about a lagging producer whose server under
// test shares its host: what can be done on that one host comes first.
const localRemedy = "on this one host, give the producers less to do or more time: fewer local sessions (--sessions), longer steps (--step-duration 30s, so a short stall weighs less), or split the CPUs between the producers (--procs, fewer than the cores) and the server (pin it to the others with taskset or cpuset); or run the producers on another host, then rerun"

// localProducers lists the lagging producers of r whose target was their
// own host.
func localProducers(r messages.StepResult) []string {
	var out []string
	for _, p := range r.PerProducer {
		if p.Saturated && p.Local {
			out = append(out, p.Producer)
		}
	}
	return out
}

// Remedy is what to do about a reason.
func Remedy(code string) string {
	switch code {
	case messages.ReasonGeneratorSaturated:
		return "the producers are CPU-bound: add producers (one per core) or give them more CPU, then rerun"
	case messages.ReasonHostOverloaded:
		return "the producers' host is busy with other work or their CPU quota is too small: run them where CPU is idle (stop the other work, fewer per host) or raise the quota, then rerun; more producers on the same host will not help"
	case messages.ReasonGeneratorStalled:
		return "a producer could not run at all (stopped, frozen, a paused VM or container, swapping): find what stopped it, then rerun"
	case messages.ReasonIncomplete:
		return "check the missing producers' logs and that nothing else sent step commands to this fleet (another run, an operator), then rerun"
	case messages.ReasonSharedID:
		return "give every producer its own --id (IMAPLOAD_ID differs per container; a StatefulSet's pod name does), or leave --id unset (hostname-pid), then rerun"
	case messages.ReasonRateMismatch:
		return "the producers' shares did not add up to the target (a producer left, or a stale registry entry): rerun; imapload ramp re-issues a step with the producers that answered"
	case messages.ReasonFailing:
		return "the server is not answering correctly: check the address and port, --tls and --tls-ca, and the accounts' user names and passwords"
	case messages.ReasonUnaddressable:
		return "fill the accounts before the run (imapload seed --messages 1000 …), or offer commands that need no message (list, select, append, noop), then rerun"
	case messages.ReasonSetupUnanswered:
		return setupRemedy
	case messages.ReasonUnserved:
		return unservedRemedy
	case messages.ReasonNoneHeld:
		return "the server sustained none of the rates offered: check what it is short of at the lowest step (its errors, its CPU, its backend), or lower --min to search further down"
	case messages.ReasonNoResult:
		return "start an aggregator (imapload aggregator) on the same NATS and check its log"
	}
	return ""
}
