package messages

import "time"

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
	// Duration is the measurement window.
	Duration Duration `json:"duration"`
	// Complete is true when every producer that accepted the step sent its
	// final batch; false when the aggregator's timeout passed first.
	Complete bool `json:"complete"`
	// Producers lists the producers that took part (sent batch 0), sorted.
	Producers []string `json:"producers"`
	// Missing lists producers that accepted the step but sent no final batch.
	Missing []string `json:"missing,omitempty"`
	// GeneratorSaturated is true when any producer fell behind its own
	// schedule: the step measured the load generator, not the server.
	GeneratorSaturated bool `json:"generator_saturated"`
	// Scheduled, Attempted, Succeeded and Dropped count scheduled commands
	// (not dial or login) whose intended start fell in the window.
	Scheduled uint64 `json:"scheduled"`
	Attempted uint64 `json:"attempted"`
	Succeeded uint64 `json:"succeeded"`
	// Dropped counts commands the generators never sent (no free session).
	Dropped uint64 `json:"dropped"`
	// Phases holds each phase's pooled figures, keyed by phase name.
	Phases map[string]PhaseResult `json:"phases"`
	// Errors lists failures by (phase, kind), most frequent first.
	Errors []ErrorGroup `json:"errors"`
	// PerProducer shows each producer beside the pool, never averaged into it.
	PerProducer []ProducerBreakdown `json:"per_producer"`
	// AverageP99Fallacy quantifies, per phase, how far the average of the
	// per-producer P99s is from the pooled P99 (relative; −0.3 = 30% low).
	AverageP99Fallacy map[string]float64 `json:"average_p99_fallacy,omitempty"`
	// Health summarises the producers' own health.
	Health HealthSummary `json:"health"`
	// Batches counts batches merged; Duplicates, Corrupt and Lost count
	// batches seen twice, undecodable, and reported lost by producers.
	Batches    uint64 `json:"batches"`
	Duplicates uint64 `json:"duplicates"`
	Corrupt    uint64 `json:"corrupt"`
	Lost       uint64 `json:"lost"`
	// Generated is when the aggregator published the result (UTC).
	Generated time.Time `json:"generated"`
}

// Percentiles are latency percentiles in milliseconds.
type Percentiles struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

// Interval is a confidence interval [low, high] in milliseconds.
type Interval [2]float64

// Intervals are 95% confidence intervals of the percentiles.
type Intervals struct {
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
	// CI are 95% intervals of the response-time percentiles from the
	// count-weighted reservoirs (stratified order-statistic interval), ms.
	CI Intervals `json:"ci"`
	// Sample are the percentiles from the count-weighted reservoirs, ms.
	Sample Percentiles `json:"sample"`
	// Disagree names percentiles where the sketch lies outside the interval.
	Disagree []string `json:"disagree,omitempty"`
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
	Phase   string `json:"phase"`
	Kind    string `json:"kind"`
	Count   uint64 `json:"count"`
	Example string `json:"example,omitempty"`
	// Producers is how many producers saw this kind.
	Producers int `json:"producers"`
}

// ProducerBreakdown is one producer's figures, shown beside the pool.
type ProducerBreakdown struct {
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
	Step          int     `json:"step"`
	Rate          float64 `json:"rate"` // the step's target rate, commands/s
	DeliveredRate float64 `json:"delivered_rate"`
	Ratio         float64 `json:"ratio"`
	Threshold     float64 `json:"threshold"`
}

// StepRef names a step and its rates.
type StepRef struct {
	Step          int     `json:"step"`
	Rate          float64 `json:"rate"`
	DeliveredRate float64 `json:"delivered_rate"`
	Ratio         float64 `json:"ratio"`
}

// RunReport is the outcome of a run, JSON on ResultsSubject.
type RunReport struct {
	// Kind is KindRunReport.
	Kind string `json:"kind"`
	// Run identifies the run.
	Run string `json:"run"`
	// Threshold is the delivered/target ratio under which a step is the knee.
	Threshold float64 `json:"threshold"`
	// Knee is the first step below Threshold; null when every step held.
	Knee *Knee `json:"knee"`
	// LastHeld is the last step before the knee that held; null if none did.
	LastHeld *StepRef `json:"last_held"`
	// Invalid lists steps where a generator was saturated: never a knee.
	Invalid []int `json:"invalid_steps"`
	// Findings are plain-language observations (bimodal login, slow backend…).
	Findings []string `json:"findings"`
	// Steps are the step results in step order.
	Steps []StepResult `json:"steps"`
	// Generated is when the report was made (UTC).
	Generated time.Time `json:"generated"`
}
