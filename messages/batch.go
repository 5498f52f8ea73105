package messages

import "time"

// Caps on what one batch may hold. A batch beyond them is refused as a whole.
const (
	MaxBatchBytes    = 1 << 20 // encoded size; also NATS's default max_payload
	MaxReservoir     = 1 << 14 // latencies in one reservoir
	MaxSketchBytes   = 64 << 10
	MaxErrorKinds    = 64  // distinct error kinds per phase; producers fold the rest into OtherKind
	MaxKindBytes     = 256 // one normalized error kind
	MaxExampleBytes  = 512 // one error example
	MaxLatencyMicros = 1<<32 - 1
)

// OtherKind collects the errors of a phase beyond MaxErrorKinds distinct kinds.
const OtherKind = "other"

// SampleBatch is what a producer saw during part of one step, msgpack-encoded
// on SamplesSubject. Counts are deltas: the step's totals are the sums over the
// producer's batches, so a batch must be counted once (dedupe on Run, Step,
// Producer, Seq).
//
// Batch 0 is sent when the producer accepts a step and carries no phases: it
// tells the aggregator to wait for this producer's final batch.
type SampleBatch struct {
	// Run is the run id (a subject token).
	Run string `msgpack:"run"`
	// Step is the step number, from 1.
	Step int `msgpack:"step"`
	// Producer is the producer id (a subject token).
	Producer string `msgpack:"producer"`
	// Seq numbers this producer's batches of this step from 0, without gaps.
	Seq uint64 `msgpack:"seq"`
	// Final is true on the producer's last batch of this step.
	Final bool `msgpack:"final"`
	// Sent is when the batch was encoded (wall clock, for display only).
	Sent time.Time `msgpack:"sent"`
	// From and To bound the part of the step this batch covers, in
	// nanoseconds since the start of the measurement window (negative during
	// warm-up), derived from the monotonic clock.
	From int64 `msgpack:"from"`
	To   int64 `msgpack:"to"`
	// Info repeats what the producer is running, so the stream alone is enough
	// to aggregate a step.
	Info StepInfo `msgpack:"info"`
	// Scheduled counts commands the generator scheduled whose intended start
	// fell in the measurement window, finished (or dropped) in this batch.
	Scheduled uint64 `msgpack:"scheduled"`
	// Completed counts those of Scheduled that succeeded: delivered throughput
	// is the sum of Completed over producers divided by the window's length.
	// (Phase counts also include set-up commands, such as a reconnect's LOGIN.)
	Completed uint64 `msgpack:"completed"`
	// Phases holds one entry per phase that saw any command in this batch.
	Phases PhaseList `msgpack:"phases"`
	// Checks counts the APPEND→FETCH integrity checks of APPENDs whose
	// intended start fell in the measurement window (absent: none).
	Checks Checks `msgpack:"checks"`
	// Arrivals counts what became of the window's deliveries to accounts
	// with a held IDLE connection (zero without deliveries).
	Arrivals Arrivals `msgpack:"arrivals"`
	// Health is the producer's own health during this batch.
	Health Health `msgpack:"health"`
	// Setup counts the sessions' set-up stages up to the end of the window
	// (see SetupStage); only a final batch carries it (absent: none).
	Setup SetupList `msgpack:"setup,omitempty"`
}

// Checks counts integrity checks: about one APPEND in ten is fetched back
// (BODY.PEEK[] by the UID the server's APPENDUID named) and compared byte for
// byte with what was sent.
type Checks struct {
	// Run counts the checks made.
	Run uint64 `msgpack:"run" json:"run"`
	// Failed counts those of Run whose message did not come back byte for
	// byte, or at all, or whose FETCH failed (its error is in phase fetch).
	Failed uint64 `msgpack:"failed" json:"failed"`
	// Unaddressable counts successful APPENDs for which the server named no
	// UID (no UIDPLUS APPENDUID, RFC 4315): none of them could be checked.
	Unaddressable uint64 `msgpack:"unaddressable" json:"unaddressable"`
}

// Add adds o's counts to c.
func (c *Checks) Add(o Checks) {
	c.Run += o.Run
	c.Failed += o.Failed
	c.Unaddressable += o.Unaddressable
}

// DisabledReason says why checks could not run, "" when nothing kept them
// from it: APPENDs got no UID from the server.
func (c Checks) DisabledReason() string {
	if c.Unaddressable == 0 {
		return ""
	}
	if c.Run == 0 {
		return "checks disabled: server has no UIDPLUS (no APPENDUID for any APPEND)"
	}
	return "checks partly disabled: some APPENDs got no UID (APPENDUID) from the server"
}

// StepInfo is the step as one producer runs it.
type StepInfo struct {
	// FleetRate is the step command's fleet-wide rate, commands/s.
	FleetRate float64 `msgpack:"fleet_rate"`
	// Rate is this producer's share, commands/s.
	Rate float64 `msgpack:"rate"`
	// Producers is the number of producers the fleet rate was divided by.
	Producers int `msgpack:"producers"`
	// Warmup and Duration are the step's warm-up and measurement window, ns.
	Warmup   int64 `msgpack:"warmup"`
	Duration int64 `msgpack:"duration"`
	// Connections is how many IDLE connections this producer holds in the
	// step (its share of StepCommand.Connections); 0 when it holds none.
	Connections int `msgpack:"connections,omitempty"`
	// FleetDeliverRate is the step command's fleet-wide deliver rate and
	// DeliverRate this producer's share of it, deliveries/s; 0 without
	// deliveries.
	FleetDeliverRate float64 `msgpack:"fleet_deliver_rate,omitempty"`
	DeliverRate      float64 `msgpack:"deliver_rate,omitempty"`
}

// PhaseStats is one phase's measurements in one batch. Only commands whose
// intended start fell in the measurement window are counted, at completion.
type PhaseStats struct {
	// Phase names the phase.
	Phase Phase `msgpack:"phase"`
	// Attempted counts commands sent and completed (success or failure).
	Attempted uint64 `msgpack:"attempted"`
	// Succeeded counts commands that completed with OK.
	Succeeded uint64 `msgpack:"succeeded"`
	// Dropped counts commands the generator scheduled but never sent because
	// no session was free and its queue was full.
	Dropped uint64 `msgpack:"dropped"`
	// Response is the response time of successful commands, from the intended
	// start (includes queueing in the producer: no coordinated omission).
	Response Sample `msgpack:"response"`
	// Service is the service time of successful commands, from the send.
	Service Sample `msgpack:"service"`
	// TLS is the TLS handshake time alone (dial phase over TLS only).
	TLS Sample `msgpack:"tls"`
	// Errors counts failures by normalized kind; their counts add up to
	// Attempted − Succeeded.
	Errors ErrorList `msgpack:"errors"`
}

// Sample is a latency distribution: a uniform reservoir drawn from Count
// values, and a DDSketch of all Count values.
type Sample struct {
	// Count is how many values were observed; the reservoir was drawn from them.
	Count uint64 `msgpack:"count"`
	// Values is a uniform random subset (Algorithm R) of the observed values,
	// in microseconds; len(Values) ≤ min(Count, MaxReservoir).
	Values Micros `msgpack:"values"`
	// Sketch is every observed value in a DDSketch (microseconds, relative
	// accuracy SketchAccuracy), encoded by EncodeSketch.
	Sketch SketchBytes `msgpack:"sketch"`
}

// ErrorCount is one kind of failure in one phase.
type ErrorCount struct {
	// Kind is the normalized error message (tags, numbers, ids, addresses and
	// quoted text stripped), e.g. "NO [AUTHENTICATIONFAILED] authentication failed".
	Kind string `msgpack:"kind"`
	// Count is how many commands failed this way.
	Count uint64 `msgpack:"count"`
	// Example is one raw message of this kind, with secrets removed.
	Example string `msgpack:"example"`
}

// Health is the producer's self-assessment: a generator that cannot keep its
// schedule measures itself, not the server.
type Health struct {
	// LagP99 is the 99th percentile of schedule lag (how late commands were
	// handed to a session after their intended start), microseconds.
	LagP99 uint64 `msgpack:"lag_p99"`
	// LagMax is the largest schedule lag, microseconds.
	LagMax uint64 `msgpack:"lag_max"`
	// Dropped counts commands dropped by the generator (all phases).
	Dropped uint64 `msgpack:"dropped"`
	// CPU is the producer process's CPU use during the batch, in cores
	// (CPU seconds per wall second).
	CPU float64 `msgpack:"cpu"`
	// Sessions is the number of open IMAP sessions when the batch was cut.
	Sessions uint32 `msgpack:"sessions"`
	// Saturated is true when the generator fell behind its schedule.
	Saturated bool `msgpack:"saturated"`
	// Lost counts earlier batches of this step the producer could not publish.
	Lost uint64 `msgpack:"lost"`
	// CPULimit is the most CPU the producer process may use, in cores
	// (GOMAXPROCS, which Go caps by the cgroup's quota); 0 when unknown.
	CPULimit float64 `msgpack:"cpu_limit"`
	// RunDelay is how long the producer's threads waited on a run queue for
	// a CPU, per wall second, during the batch (/proc/self/task/*/schedstat);
	// a busy host keeps a runnable producer off the CPU.
	RunDelay float64 `msgpack:"run_delay"`
	// Pressure is the share of wall time during the batch in which some task
	// on the host waited for a CPU (/proc/pressure/cpu "some").
	Pressure float64 `msgpack:"pressure"`
	// Throttled is the share of wall time during the batch in which the
	// producer's cgroup was throttled by its CPU quota (cpu.max).
	Throttled float64 `msgpack:"throttled"`
	// Stopped is true when the process was stopped and continued (SIGSTOP,
	// SIGCONT) during the batch: it could not run at all for a while.
	Stopped bool `msgpack:"stopped"`
	// Held is the number of held IDLE connections (StepInfo.Connections)
	// set up and idling when the batch was cut.
	Held uint32 `msgpack:"held,omitempty"`
	// HeldMin is the fewest held connections idling at any moment of the
	// measurement window that this batch covers (Held when the batch lies in
	// the warm-up).
	HeldMin uint32 `msgpack:"held_min,omitempty"`
	// Local is true when the producer's target address is its own host's
	// (loopback, or an address of one of its interfaces): the server under
	// test competes with the producer for the same CPUs.
	Local bool `msgpack:"local,omitempty"`
	// HeldDrops counts held connections that broke (closed by the server,
	// or failed a re-IDLE) during the measurement window in this batch.
	HeldDrops uint64 `msgpack:"held_drops,omitempty"`
}

// PhaseStats returns the entry for p, or nil.
func (b *SampleBatch) PhaseStats(p Phase) *PhaseStats {
	for i := range b.Phases {
		if b.Phases[i].Phase == p {
			return &b.Phases[i]
		}
	}
	return nil
}
