package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// bigForged is one large valid batch of run's step (a step of 256 or more),
// with full reservoirs of size latencies in four phases (about 220 KB at
// 8192), claiming a 24 h window.
func bigForged(run string, step, size int) *messages.SampleBatch {
	info := messages.StepInfo{FleetRate: 1e6, Rate: 1e6, Producers: 1, Duration: int64(24 * time.Hour)}
	rec := recorder.New(run, step, "forger", info, &recorder.Options{Seed: 1, Reservoir: size})
	for _, ph := range []messages.Phase{messages.List, messages.Select, messages.Fetch, messages.Store} {
		for i := range 2 * size {
			d := time.Duration(100+i*7919%100_000) * time.Microsecond
			rec.Record(ph, d, d/2)
		}
	}
	return rec.Cut(0, time.Second, false, messages.Health{})
}

// stepKey is how a batch's step from 256 to 65535 is encoded: the key
// "step" and a msgpack uint16 marker, then the step in two bytes.
var stepKey = []byte("\xa4step\xcd")

// restep returns copies of data (an encoded batch of a step from 256 to
// 65535) for other steps of that range, by rewriting the step's two bytes:
// encoding each 220 KB batch anew takes over a minute under the race
// detector. The first and last copies are decoded to prove the rewrite.
func restep(t *testing.T, data []byte, steps []int) [][]byte {
	t.Helper()
	i := bytes.Index(data, stepKey)
	if i < 0 {
		t.Fatalf("encoded batch has no %q", stepKey)
	}
	var out [][]byte
	for _, step := range steps {
		c := bytes.Clone(data)
		j := i + len(stepKey)
		c[j], c[j+1] = byte(step>>8), byte(step) // big-endian, as msgpack is
		out = append(out, c)
	}
	for _, k := range []int{0, len(steps) - 1} {
		if b, err := messages.DecodeBatch(out[k]); err != nil || b.Step != steps[k] {
			t.Fatalf("rewritten batch for step %d decodes as step %v, %v", steps[k], b, err)
		}
	}
	return out
}

// TestFaultForgedBytes is issue 10's finding 3 with real processes: 240 MB
// of forged but valid batches (1,100 of 220 KB, each for a new step) are
// published, then a real step runs. The aggregator's peak resident set
// stays under 128 MB, the real step's result is complete and pools the real
// batches alone, and no forged step gets a result.
func TestFaultForgedBytes(t *testing.T) {
	t.Parallel()
	const run, forge = "fault-bytes", "fault-bigforge"
	f := startFaultFleet(t, faultOptions{name: "fbytes"})
	before := vmHWM(t, f.aggP)
	proto, err := messages.EncodeBatch(bigForged(forge, 1000, 8192))
	if err != nil {
		t.Fatalf("EncodeBatch: %v", err)
	}
	steps := make([]int, 1100) // 240 MB, as in the finding
	for i := range steps {
		steps[i] = 1000 + i
	}
	start := time.Now()
	size := f.forgeEncoded(t, forge, "forger", steps, restep(t, proto, steps))
	t.Logf("%d forged batches, %d MB, stored in %v", len(steps), size>>20, time.Since(start).Round(time.Millisecond))

	f.step(t, run, 1, 40, 3*time.Second)
	r := latest(t, f.js, run, 1, 2*time.Minute, nil)
	f.checkWhole(t, r)
	f.awaitSettled(t, 2*time.Minute)
	peak := vmHWM(t, f.aggP)
	t.Logf("aggregator VmHWM %d MB before the flood, %d MB after it and the real step", before>>20, peak>>20)
	if peak >= faultMemoryBound {
		t.Errorf("aggregator VmHWM = %d MB after %d MB of forged batches, want under %d MB", peak>>20, size>>20, faultMemoryBound>>20)
	}
	if got := streamResults(t, f.js, forge); len(got) != 0 {
		t.Errorf("%d forged steps got a result, want none", len(got))
	}
}
