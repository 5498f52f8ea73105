package main

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/imapload/imapload/messages"
)

// malformedBatches are 53 payloads no producer sends, made from a real
// batch b: 15 of random bytes, 15 cuts of b's encoding, 10 huge length
// claims (bare and inside b's encoding), and 13 copies of b with a NaN or
// an infinity in a float field.
func malformedBatches(t *testing.T, b *messages.SampleBatch) [][]byte {
	t.Helper()
	enc, err := messages.EncodeBatch(b)
	if err != nil {
		t.Fatalf("EncodeBatch: %v", err)
	}
	rng := rand.New(rand.NewPCG(10, 53))
	var out [][]byte
	for i := range 15 {
		junk := make([]byte, 1+rng.IntN(2000))
		for j := range junk {
			junk[j] = byte(rng.Uint32())
		}
		out = append(out, junk)
		out = append(out, enc[:len(enc)*i/15+rng.IntN(len(enc)/15)])
	}
	out = append(out, hugeClaims(t, enc)...)
	return append(out, nonFinite(t, b)...)
}

// hugeClaims are msgpack headers claiming 4 GB (bare), and b's encoding with
// a field's header replaced by one claiming 2 GB.
func hugeClaims(t *testing.T, enc []byte) [][]byte {
	t.Helper()
	out := [][]byte{
		{0xdf, 0xff, 0xff, 0xff, 0xff}, {0xdd, 0xff, 0xff, 0xff, 0xff}, {0xdb, 0xff, 0xff, 0xff, 0xff},
		{0xc6, 0xff, 0xff, 0xff, 0xff}, {0xc9, 0xff, 0xff, 0xff, 0xff, 0x01}, {0xde, 0xff, 0xff},
	}
	for _, f := range []struct{ key, header string }{
		{"\xa3run", "\xdb\x7f\xff\xff\xff"}, {"\xa6phases", "\xdd\x7f\xff\xff\xff"},
		{"\xa6sketch", "\xc6\x7f\xff\xff\xff"}, {"\xa6values", "\xdd\x7f\xff\xff\xff"},
	} {
		i := bytes.Index(enc, []byte(f.key))
		if i < 0 {
			t.Fatalf("encoded batch has no key %q", f.key)
		}
		at := i + len(f.key)
		out = append(out, append(append(bytes.Clone(enc[:at]), f.header...), enc[at+1:]...))
	}
	return out
}

// nonFinite are copies of b with NaN in each of its seven float fields and
// +Inf in six.
func nonFinite(t *testing.T, b *messages.SampleBatch) [][]byte {
	t.Helper()
	var out [][]byte
	for _, v := range []float64{math.NaN(), math.Inf(1)} {
		for i, set := range []func(c *messages.SampleBatch){
			func(c *messages.SampleBatch) { c.Info.FleetRate = v }, func(c *messages.SampleBatch) { c.Info.Rate = v },
			func(c *messages.SampleBatch) { c.Health.CPU = v }, func(c *messages.SampleBatch) { c.Health.CPULimit = v },
			func(c *messages.SampleBatch) { c.Health.RunDelay = v }, func(c *messages.SampleBatch) { c.Health.Pressure = v },
			func(c *messages.SampleBatch) { c.Health.Throttled = v },
		} {
			if math.IsInf(v, 1) && i == 6 {
				break
			}
			c := *b
			set(&c)
			enc, err := rawEncode(&c)
			if err != nil {
				t.Fatalf("EncodeBatch(%v in field %d): %v", v, i, err)
			}
			out = append(out, enc)
		}
	}
	return out
}

// TestFaultMalformedBatches publishes 53 malformed payloads raw on a real
// step's samples subjects while it runs (once a batch 2, with latencies, is seen):
// random bytes, truncated msgpack, huge length claims, NaN and infinities.
// Each is counted in the step's Corrupt or Rejected; the step's result is
// otherwise what the real producers sent: complete, from both, their
// batches and counts.
func TestFaultMalformedBatches(t *testing.T) {
	t.Parallel()
	const run = "fault-junk"
	f := startFaultFleet(t, faultOptions{name: "fjunk"})
	first := make(chan *messages.SampleBatch, 1)
	subscribe(t, f.nc, messages.StepSamplesFilter(run, 1), func(m *nats.Msg) {
		if b, err := messages.DecodeBatch(m.Data); err == nil && b.Seq == 2 && !b.Final {
			select {
			case first <- b:
			default:
			}
		}
	})
	f.step(t, run, 1, 40, 3*time.Second)
	var junk [][]byte
	select {
	case b := <-first:
		b.Producer = "junk"
		junk = malformedBatches(t, b)
	case <-time.After(time.Minute):
		t.Fatal("no batch 2 within a minute")
	}
	js := f.asyncJS(t)
	for i, data := range junk {
		f.forgeRaw(t, js, messages.SamplesSubject(run, 1, "junk"), data, fmt.Sprintf("junk-%d", i))
	}
	f.awaitStored(t, js, len(junk))

	r := latest(t, f.js, run, 1, time.Minute, nil)
	f.checkWhole(t, r)
	refused := r.Corrupt
	for _, n := range r.Rejected {
		refused += n
	}
	t.Logf("%d malformed batches: corrupt %d, rejected %v; the step pooled %d batches, %d scheduled", len(junk), r.Corrupt, r.Rejected, r.Batches, r.Scheduled)
	if len(junk) != 53 || refused != uint64(len(junk)) {
		t.Errorf("%d malformed batches published, the result counts %d corrupt and %v rejected; want 53, each counted once", len(junk), r.Corrupt, r.Rejected)
	}
}

// rawEncode encodes b as EncodeBatch does, without refusing what is out of
// range: as a forger's own encoder would.
func rawEncode(b *messages.SampleBatch) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	err := enc.Encode(b)
	return buf.Bytes(), err
}
