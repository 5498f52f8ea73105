package messages

import (
	"encoding/json"
	"math"
	"time"
)

// Kinds of JSON message on ResultsSubject, in their "kind" field.
const (
	KindStepResult = "step_result"
	KindRunReport  = "run_report"
)

// StepResult is the pooled outcome of one step, JSON on ResultsSubject.
// Latencies are in milliseconds; rates in commands per second.
type StepResult struct {
	// Kind is KindStepResult.
	Kind string `json:"kind"`
	// Run and Step identify the step.
	Run  string `json:"run"`
	Step int    `json:"step"`
	// TargetRate is the offered fleet-wide rate of the step command, commands/s.
	TargetRate float64 `json:"target_rate"`
	// DeliveredRate is successful scheduled commands inside the measurement
	// window divided by the window's length, summed over producers, commands/s.
	DeliveredRate float64 `json:"delivered_rate"`
	// Ratio is DeliveredRate / TargetRate.
	Ratio float64 `json:"ratio"`
	// SessionRate is the successful LOGINs whose start fell inside the
	// measurement window divided by the window's length, summed over
	// producers: sessions per second, the unit imaptest reports.
	SessionRate float64 `json:"session_rate"`
	// TargetSessionRate is the offered fleet-wide rate in sessions per
	// second of a step that runs a session script (TargetRate divided by the
	// script's commands); 0 for a step of commands drawn from a mix.
	TargetSessionRate float64 `json:"target_session_rate,omitempty"`
	// Script is the step's session script (see StepCommand.Script), empty
	// for a step of commands drawn from a mix.
	Script string `json:"script,omitempty"`
	// Profile is the step's named workload (see StepCommand.Profile), empty
	// for none.
	Profile string `json:"profile,omitempty"`
	// Duration is the measurement window.
	Duration Duration `json:"duration"`
	// Complete is true when every producer that accepted the step sent its
	// final batch; false when the aggregator's timeout passed first.
	Complete bool `json:"complete"`
	// Producers lists the producers that took part (sent batch 0), sorted.
	Producers []string `json:"producers"`
	// Missing lists producers that accepted the step but sent no final batch.
	Missing []string `json:"missing,omitempty"`
	// SharedIDs names each producer id whose batches came from more than one
	// process (instance) in the step: two producers started with one --id,
	// whose batches collide and whose shares overlap; absent when none.
	SharedIDs []SharedID `json:"shared_ids,omitempty"`
	// GeneratorSaturated is true when any producer fell behind its own
	// schedule, whatever the cause (Reasons names it): the step measured the
	// load generator or its host, not the server.
	GeneratorSaturated bool `json:"generator_saturated"`
	// Verdict is VerdictHeld, VerdictBelow or VerdictInconclusive: see
	// package verdict for the rule.
	Verdict string `json:"verdict"`
	// Reasons say why a step is inconclusive (empty when it is not), each
	// with what was seen and what to do.
	Reasons []Reason `json:"reasons,omitempty"`
	// OfferedRate is what the producers that took part planned to offer,
	// summed over them (each one's share of TargetRate), commands/s. It falls
	// short of TargetRate when the rate was divided by more producers than ran.
	OfferedRate float64 `json:"offered_rate"`
	// StoppedEarly lists producers whose final batch ended before the
	// measurement window did: the step was stopped (by a command for another
	// step, or a producer shutting down).
	StoppedEarly []string `json:"stopped_early,omitempty"`
	// Scheduled, Attempted, Succeeded and Dropped count scheduled commands
	// (not dial or login) whose intended start fell in the window.
	Scheduled uint64 `json:"scheduled"`
	Attempted uint64 `json:"attempted"`
	Succeeded uint64 `json:"succeeded"`
	// Dropped counts commands the generators never sent (no free session).
	Dropped uint64 `json:"dropped"`
	// Phases holds each phase's pooled figures, keyed by phase name.
	Phases map[string]PhaseResult `json:"phases"`
	// Checks counts the APPEND→FETCH integrity checks run and failed in the
	// window, and the APPENDs no check could address (absent: none).
	Checks Checks `json:"checks,omitzero"`
	// ChecksDisabled says what kept integrity checks from running (see
	// Checks.DisabledReason), "" when nothing did.
	ChecksDisabled string `json:"checks_disabled,omitempty"`
	// Errors lists failures by (phase, kind), most frequent first.
	Errors []ErrorGroup `json:"errors"`
	// Setup is the sessions' set-up, stage by stage, summed over the
	// producers' final batches (see SetupStage; Error is the kind most
	// frequent at any one producer); absent from older producers.
	Setup []SetupStage `json:"setup,omitempty"`
	// PerProducer shows each producer beside the pool, never averaged into it.
	PerProducer []ProducerBreakdown `json:"per_producer"`
	// AverageP99Fallacy quantifies, per phase, how far the average of the
	// per-producer P99s is from the pooled P99 (relative; −0.3 = 30% low).
	AverageP99Fallacy map[string]float64 `json:"average_p99_fallacy,omitempty"`
	// Health summarises the producers' own health.
	Health HealthSummary `json:"health"`
	// Connections is what the step's held IDLE connections did; absent when
	// the step held none.
	Connections *ConnectionsResult `json:"connections,omitempty"`
	// Deliveries is what the step's deliveries (StepCommand.DeliverRate)
	// did; absent when the step delivered none.
	Deliveries *DeliveriesResult `json:"deliveries,omitempty"`
	// Server is what the observers (imapload observe) scraped from the
	// server's own metrics endpoints during the window: the mail host's CPU,
	// disk and memory from node_exporter, Dovecot's logins and command
	// durations, the embedded server's workers; absent when no observer
	// announced the step.
	Server *ServerResult `json:"server,omitempty"`
	// Caveats say what a step's figures carry that does not void it, each
	// with what was seen and what to do: a step that delivered its target
	// while its generator lagged held, but its latencies include that lag
	// (code: the lag's cause); a step run after an overload measured a
	// server that may not have recovered (CaveatAfterOverload).
	Caveats []Reason `json:"caveats,omitempty"`
	// Below says why a below step is below: the command rate, the held
	// connections, new connections failing, or the deliveries (see package
	// verdict).
	Below string `json:"below,omitempty"`
	// Batches counts batches merged; Duplicates, Corrupt and Lost count
	// batches seen twice, undecodable, and reported lost by producers.
	Batches    uint64 `json:"batches"`
	Duplicates uint64 `json:"duplicates"`
	Corrupt    uint64 `json:"corrupt"`
	Lost       uint64 `json:"lost"`
	// Rejected counts, by reason, the batches refused for disagreeing with
	// the step's command (shape, window, counts, finals); none was pooled.
	Rejected map[string]uint64 `json:"rejected,omitempty"`
	// Generated is when the aggregator published the result (UTC).
	Generated time.Time `json:"generated"`
	// Revision numbers the results of one step: 0 for the first. Batches of
	// the step stored after its result was published (late, after a NATS
	// outage) re-open it, and a corrected result is published with Revision
	// one higher. Readers use the highest revision of each step.
	Revision int `json:"revision,omitempty"`
	// ThroughSeq is the highest IMAPLOAD_SAMPLES stream sequence among the
	// messages this result considered; a batch of the step stored after it
	// re-opens the step.
	ThroughSeq uint64 `json:"through_seq,omitempty"`
}

// Percentiles are latency percentiles in milliseconds.
type Percentiles struct {
	// P50, P90, P99 and P999 are the 50th, 90th, 99th and 99.9th
	// percentiles, ms.
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	// Max is the largest value, ms.
	Max float64 `json:"max"`
}

// Interval is a confidence interval [low, high] in milliseconds. An open
// upper bound (too few values for one) is +Inf, written as null in JSON.
type Interval [2]float64

// Open reports whether the interval has no upper bound.
func (iv Interval) Open() bool { return math.IsInf(iv[1], 1) }

// MarshalJSON writes [low, high], high null when open.
func (iv Interval) MarshalJSON() ([]byte, error) {
	var high any = iv[1]
	if iv.Open() {
		high = nil
	}
	return json.Marshal([2]any{iv[0], high})
}

// UnmarshalJSON reads [low, high], high null meaning open.
func (iv *Interval) UnmarshalJSON(b []byte) error {
	var v [2]*float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*iv = Interval{}
	if v[0] != nil {
		iv[0] = *v[0]
	}
	if v[1] == nil && v[0] != nil {
		iv[1] = math.Inf(1)
	} else if v[1] != nil {
		iv[1] = *v[1]
	}
	return nil
}

// Intervals are 95% confidence intervals of the percentiles.
type Intervals struct {
	// P50, P90, P99 and P999 are the intervals of those percentiles, ms.
	P50  Interval `json:"p50"`
	P90  Interval `json:"p90"`
	P99  Interval `json:"p99"`
	P999 Interval `json:"p999"`
}

// PhaseResult is one phase of a step, pooled over every producer. The
// top-level percentiles are response times from the merged sketches.
type PhaseResult struct {
	// Count is the number of latencies pooled (successful commands).
	Count uint64 `json:"count"`
	// Attempted, Succeeded and Dropped are summed over producers.
	Attempted uint64 `json:"attempted"`
	Succeeded uint64 `json:"succeeded"`
	Dropped   uint64 `json:"dropped"`
	// Percentiles of response time (from intended start), merged sketches, ms.
	Percentiles
	// CI are 95% distribution-free order-statistic intervals of the
	// response-time percentiles about the server's latency distribution, over
	// Count + Dropped, read off the merged sketch; open above (null) for
	// TooFew or never-sent ranks, ms.
	CI Intervals `json:"ci"`
	// Sample are the percentiles from the count-weighted reservoirs, ms.
	Sample Percentiles `json:"sample"`
	// Disagree names percentiles where the sketch lies outside the interval.
	Disagree []string `json:"disagree,omitempty"`
	// NeverSent is the share of this phase's scheduled commands that the
	// generator never sent (Dropped ÷ (Count + Dropped)). They count in the
	// response-time percentiles as unserved (+Inf): a percentile whose rank
	// falls among them is listed in Above.
	NeverSent float64 `json:"never_sent,omitempty"`
	// Above names percentiles that are only lower bounds: their rank falls
	// among commands never sent, so the value is "more than" the figure (the
	// largest served response time).
	Above []string `json:"above,omitempty"`
	// TooFew names percentiles for which the pooled count cannot support a
	// two-sided 95% interval (P99 under about 300 values, P99.9 under about
	// 3,000): their CI has an open upper bound.
	TooFew []string `json:"too_few,omitempty"`
	// Unresolved names percentiles whose rank the sample cannot resolve:
	// fewer than one of the Count + Dropped values is expected above them
	// (N·(1−q) < 1: P99 under 100 values, P99.9 under 1,000). The sample's
	// largest value is all it says of them, so their figure is Max and reads
	// "too few", never a value below the maximum (see docs/intervals.md).
	Unresolved []string `json:"unresolved,omitempty"`
	// Service are service-time percentiles (from the send), ms.
	Service Percentiles `json:"service"`
	// TLS are TLS-handshake percentiles (dial over TLS only), ms.
	TLS *Percentiles `json:"tls,omitempty"`
	// Bimodal is set when the log-latency distribution has two well
	// separated modes (e.g. login cache hits and bcrypt misses).
	Bimodal *Bimodality `json:"bimodal,omitempty"`
}

// Bimodality describes two modes of a latency distribution.
type Bimodality struct {
	// LowMode and HighMode are the modes' centres, ms.
	LowMode  float64 `json:"low_mode"`
	HighMode float64 `json:"high_mode"`
	// LowShare and HighShare are each mode's share of the values (sum 1).
	LowShare  float64 `json:"low_share"`
	HighShare float64 `json:"high_share"`
	// Separation is the distance between the modes in pooled standard
	// deviations of log-latency.
	Separation float64 `json:"separation"`
}

// ErrorGroup is one kind of failure in one phase, summed over producers.
type ErrorGroup struct {
	// Phase is the phase that failed (dial, login, fetch, …).
	Phase string `json:"phase"`
	// Kind is the normalized error message: tags, numbers, UIDs, addresses,
	// hex and quoted text replaced, so one cause is one kind.
	Kind string `json:"kind"`
	// Count is how many commands failed so, summed over producers.
	Count uint64 `json:"count"`
	// Example is one message of the kind as seen, secrets removed.
	Example string `json:"example,omitempty"`
	// Producers is how many producers saw this kind.
	Producers int `json:"producers"`
}

// ProducerBreakdown is one producer's figures, shown beside the pool.
type ProducerBreakdown struct {
	// Producer is the producer's id.
	Producer string `json:"producer"`
	// Count is its successful scheduled commands; Share its part of the fleet's.
	Count uint64  `json:"count"`
	Share float64 `json:"share"`
	// P99 is its response-time P99 over scheduled commands, ms.
	P99 float64 `json:"p99"`
	// ErrorShare is its part of the fleet's errors.
	ErrorShare float64 `json:"error_share"`
	// Deviant is set when its distribution departs from the pool's; Reason says how.
	Deviant bool   `json:"deviant,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Saturated is true when this producer's generator fell behind.
	Saturated bool `json:"saturated,omitempty"`
	// Rate is the producer's share of the target rate, commands/s.
	Rate float64 `json:"rate"`
	// LagP99 is its largest per-batch schedule-lag P99, ms.
	LagP99 float64 `json:"lag_p99"`
	// CPU and CPULimit are its highest CPU use and the CPU it may use, cores.
	CPU      float64 `json:"cpu"`
	CPULimit float64 `json:"cpu_limit,omitempty"`
	// RunDelay, Pressure and Throttled are the highest of its batches' (see
	// Health): waiting for a CPU, host CPU pressure, cgroup throttling.
	RunDelay  float64 `json:"run_delay,omitempty"`
	Pressure  float64 `json:"pressure,omitempty"`
	Throttled float64 `json:"throttled,omitempty"`
	// Stopped is true when the process was stopped (SIGSTOP) during the step.
	Stopped bool `json:"stopped,omitempty"`
	// Local is true when the producer's target was its own host (see
	// Health.Local): the server under test shared its CPUs.
	Local bool `json:"local,omitempty"`
	// LagCause names why it fell behind, when Saturated: a Reason code
	// (generator_saturated, host_overloaded or generator_stalled).
	LagCause string `json:"lag_cause,omitempty"`
}

// HealthSummary gathers producers' self-health for a step.
type HealthSummary struct {
	// LagP99Max is the largest per-batch schedule-lag P99 of any producer, ms.
	LagP99Max float64 `json:"lag_p99_max"`
	// CPUMax is the highest CPU use of any producer in any batch, cores.
	CPUMax float64 `json:"cpu_max"`
	// SessionsMax is the most open sessions summed over producers in a flush.
	SessionsMax uint64 `json:"sessions_max"`
	// SaturatedProducers lists producers whose generator fell behind.
	SaturatedProducers []string `json:"saturated_producers,omitempty"`
}

// Knee is the first step whose delivered/target ratio fell below Threshold.
type Knee struct {
	// Step is the knee step's number.
	Step int `json:"step"`
	// Rate is the step's target rate, commands/s.
	Rate float64 `json:"rate"`
	// DeliveredRate is what the step delivered, commands/s.
	DeliveredRate float64 `json:"delivered_rate"`
	// Ratio is DeliveredRate / Rate.
	Ratio float64 `json:"ratio"`
	// Threshold is the ratio under which a step is the knee.
	Threshold float64 `json:"threshold"`
	// Low, when > 0, makes the knee a range: inconclusive steps (listed in
	// Uncertain) lie between the last step that held and this one, so the
	// first rate the server could not sustain is above the last held rate and
	// at most Rate, from Low (the lowest inconclusive rate) up.
	Low       float64 `json:"low,omitempty"`
	Uncertain []int   `json:"uncertain_steps,omitempty"`
	// Connections is the held connections the knee step offered (a
	// connection ramp's knee); 0 when it held none.
	Connections int `json:"connections,omitempty"`
	// Below says what the knee step fell short on (see StepResult.Below).
	Below string `json:"below,omitempty"`
}

// StepRef names a step and its rates.
type StepRef struct {
	// Step is the step's number.
	Step int `json:"step"`
	// Rate is the step's target rate, commands/s.
	Rate float64 `json:"rate"`
	// DeliveredRate is what the step delivered, commands/s.
	DeliveredRate float64 `json:"delivered_rate"`
	// Ratio is DeliveredRate / Rate.
	Ratio float64 `json:"ratio"`
}

// Step verdicts, in StepResult.Verdict.
const (
	// VerdictHeld: a valid step that delivered at least the threshold.
	VerdictHeld = "held"
	// VerdictBelow: a valid step that delivered less than the threshold.
	VerdictBelow = "below"
	// VerdictInconclusive: the step did not measure the server (Reasons say why).
	VerdictInconclusive = "inconclusive"
)

// Run verdicts, in RunReport.Verdict.
const (
	// RunKnee: a knee was found among complete, valid steps.
	RunKnee = "knee"
	// RunNoKnee: every valid step held; the ramp stopped at its limit.
	RunNoKnee = "no_knee"
	// RunInconclusive: the run stopped at a step that could not be measured
	// before any knee was found.
	RunInconclusive = "inconclusive"
	// RunFailing: the server did not answer correctly (most commands failed).
	RunFailing = "failing"
	// RunNoneHeld: every valid step fell below, down to the lowest rate
	// offered (the ramp's floor, --min): no rate the server sustains was
	// found, so there is no bracket and no knee.
	RunNoneHeld = "none_held"
)

// Reason codes: why a step is inconclusive (StepResult.Reasons).
const (
	// ReasonGeneratorSaturated: a producer was CPU-bound and fell behind.
	ReasonGeneratorSaturated = "generator_saturated"
	// ReasonHostOverloaded: a producer fell behind because its host was busy
	// with other work (run queue, CPU pressure) or its cgroup was throttled.
	ReasonHostOverloaded = "host_overloaded"
	// ReasonGeneratorStalled: a producer fell behind without using CPU or
	// waiting for one: it was stopped, frozen or paused.
	ReasonGeneratorStalled = "generator_stalled"
	// ReasonIncomplete: producers are missing or the step was stopped early.
	ReasonIncomplete = "incomplete"
	// ReasonSharedID: two processes ran as one producer id, so their batches
	// collided and the step's counts are not the fleet's.
	ReasonSharedID = "shared_id"
	// ReasonRateMismatch: the fleet offered more than 2% away from the target.
	ReasonRateMismatch = "rate_mismatch"
	// ReasonFailing: most attempted commands failed (refused, TLS,
	// authentication, …): the server is not answering correctly.
	ReasonFailing = "failing"
	// ReasonUnaddressable: more than 2% of the scheduled commands had
	// nothing to address (empty mailboxes) and were never sent: the server
	// was offered less than the target.
	ReasonUnaddressable = "unaddressable"
	// ReasonSetupUnanswered: the server served (almost) none of the
	// scheduled commands because the sessions' set-up (connect, TLS,
	// greeting, LOGIN, SELECT) was still unanswered when the window ended:
	// the step could not measure the server's rate at all.
	ReasonSetupUnanswered = "setup_unanswered"
	// ReasonUnserved: the server served (almost) none of the scheduled
	// commands and neither failures nor unanswered set-ups explain it.
	ReasonUnserved = "unserved"
	// ReasonNoneHeld: no valid step held, down to the lowest rate offered
	// (RunReport reasons only).
	ReasonNoneHeld = "none_held"
	// ReasonNoResult: no result of the step arrived (RunReport reasons only).
	ReasonNoResult = "no_result"
)

// Reason is one reason a step or a run is inconclusive.
type Reason struct {
	// Code is one of the Reason… constants.
	Code string `json:"code"`
	// Detail says what was seen, with figures.
	Detail string `json:"detail"`
	// Remedy says what to do about it.
	Remedy string `json:"remedy,omitempty"`
}

// ThresholdCheck is one pass/fail criterion of a run (--expect-knee-above,
// --max-p99, --max-error-rate), evaluated on the steps that held.
type ThresholdCheck struct {
	// Name is the criterion as given, e.g. "max-p99 fetch=50ms".
	Name string `json:"name"`
	// Pass is true when the run met it.
	Pass bool `json:"pass"`
	// Detail says what was measured against it.
	Detail string `json:"detail"`
}

// RunReport is the outcome of a run, JSON on ResultsSubject.
type RunReport struct {
	// Kind is KindRunReport.
	Kind string `json:"kind"`
	// Run identifies the run.
	Run string `json:"run"`
	// Verdict is RunKnee, RunNoKnee, RunNoneHeld, RunInconclusive or
	// RunFailing.
	Verdict string `json:"verdict"`
	// Reasons say why the run is inconclusive or failing, and what to do.
	Reasons []Reason `json:"reasons,omitempty"`
	// TopErrors are the most frequent error kinds of a failing run.
	TopErrors []ErrorGroup `json:"top_errors,omitempty"`
	// Thresholds are the run's pass/fail criteria, if any were given.
	Thresholds []ThresholdCheck `json:"thresholds,omitempty"`
	// Threshold is the delivered/target ratio under which a step is the knee.
	Threshold float64 `json:"threshold"`
	// Knee is the first step below Threshold; null when every step held.
	Knee *Knee `json:"knee"`
	// LastHeld is the last complete, valid step before the knee that held;
	// null if none did.
	LastHeld *StepRef `json:"last_held"`
	// MostHeld is the step that held the most IDLE connections with the
	// command rate intact (a valid step whose verdict is held); null when no
	// step held connections.
	MostHeld *HeldRef `json:"most_held,omitempty"`
	// Invalid lists inconclusive steps (see StepResult.Reasons): never the
	// knee nor the last held step.
	Invalid []int `json:"invalid_steps"`
	// Findings are plain-language observations (bimodal login, slow backend…).
	Findings []string `json:"findings"`
	// Steps are the step results in step order.
	Steps []StepResult `json:"steps"`
	// Generated is when the report was made (UTC).
	Generated time.Time `json:"generated"`
}

// GeneratorKind prefixes the error kinds that imapload itself caused (no free
// account, an empty mailbox, a command its own session state did not allow):
// they are counted apart from the server's errors and never make a step
// failing.
const GeneratorKind = "generator: "

// UnaddressableKind prefixes the generator kinds of scheduled commands that
// had nothing to address (a FETCH of an empty INBOX, an EXPUNGE with no
// message of imapload's to remove): they were never sent, so the server was
// offered less than the target (see ReasonUnaddressable).
const UnaddressableKind = GeneratorKind + "nothing to address: "

// SharedID is a producer id seen from more than one process in one step.
type SharedID struct {
	// Producer is the id.
	Producer string `json:"producer"`
	// Instances are the processes' instances (drawn at each start, carried in
	// the batches' message ids), sorted.
	Instances []string `json:"instances"`
}
