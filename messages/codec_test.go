package messages_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/vmihailenco/msgpack/v5"
)

// sketchOf records vs (µs) in a contract sketch and returns its encoding.
func sketchOf(tb testing.TB, vs ...float64) messages.SketchBytes {
	tb.Helper()
	s := messages.NewSketch()
	for _, v := range vs {
		if err := s.Add(v); err != nil {
			tb.Fatalf("Sketch.Add(%v) error = %v", v, err)
		}
	}
	return messages.EncodeSketch(nil, s)
}

// sampleOf draws n latencies around mean µs (exponential, plus a floor) and
// keeps a reservoir of at most keep of them, as a producer would.
func sampleOf(tb testing.TB, rng *rand.Rand, n, keep int, mean float64) messages.Sample {
	tb.Helper()
	if n == 0 {
		return messages.Sample{}
	}
	all := make([]float64, n)
	for i := range all {
		all[i] = math.Round(mean/4 + rng.ExpFloat64()*mean)
	}
	values := make(messages.Micros, min(n, keep))
	for i := range values {
		values[i] = uint32(all[i])
	}
	return messages.Sample{Count: uint64(n), Values: values, Sketch: sketchOf(tb, all...)}
}

// batchOf is a batch as a producer sends it mid-step under the default mix:
// its six phases with dial and login (the benchmarks' batch, unchanged since
// the client phases came), with reservoirs of up to keep values, sketches,
// errors and integrity checks.
func batchOf(tb testing.TB, keep int) *messages.SampleBatch {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	errs := map[messages.Phase]messages.ErrorList{
		messages.Dial:   {{Kind: "dial tcp: connect: connection refused", Count: 3, Example: "dial tcp 10.0.0.7:993: connect: connection refused"}},
		messages.Login:  {{Kind: "NO [AUTHENTICATIONFAILED] authentication failed", Count: 7, Example: "a12 NO [AUTHENTICATIONFAILED] Authentication failed."}},
		messages.Fetch:  {{Kind: "BAD command syntax error", Count: 2}, {Kind: "read: connection reset by peer", Count: 1}},
		messages.Append: {{Kind: "NO [OVERQUOTA] quota exceeded", Count: 4, Example: "a99 NO [OVERQUOTA] Quota exceeded (mailbox for user is full)"}},
	}
	b := &messages.SampleBatch{
		Run: "r1", Step: 3, Producer: "p-1", Seq: 4,
		Sent: time.Unix(1_750_000_000, 123_456_789),
		From: 5_000_000_000, To: 10_000_000_000,
		Info:   messages.StepInfo{FleetRate: 1000, Rate: 250, Producers: 4, Warmup: 3e9, Duration: 30e9},
		Health: messages.Health{LagP99: 850, LagMax: 4100, Dropped: 3, CPU: 0.42, Sessions: 64},
		Checks: messages.Checks{Run: 25, Failed: 1},
	}
	for _, p := range messages.Phases() {
		if _, inMix := messages.DefaultMix()[p.String()]; p.Scheduled() && !inMix {
			continue
		}
		ok := 200 + 100*uint64(p)
		ps := messages.PhaseStats{Phase: p, Succeeded: ok, Attempted: ok, Errors: errs[p]}
		for _, e := range ps.Errors {
			ps.Attempted += e.Count
		}
		mean := 500 * float64(p+1)
		ps.Response = sampleOf(tb, rng, int(ok), keep, mean*1.2)
		ps.Service = sampleOf(tb, rng, int(ok), keep, mean)
		if p == messages.Dial {
			ps.TLS = sampleOf(tb, rng, int(ok), keep, mean/2)
		}
		if p.Scheduled() {
			ps.Dropped = uint64(p) % 2
			b.Scheduled += ps.Attempted + ps.Dropped
			b.Completed += ps.Succeeded
		}
		b.Phases = append(b.Phases, ps)
	}
	return b
}

// diffBatch says how got differs from want; times compare as instants.
func diffBatch(got, want *messages.SampleBatch) string {
	if !got.Sent.Equal(want.Sent) {
		return fmt.Sprintf("Sent = %v, want %v", got.Sent, want.Sent)
	}
	g, w := *got, *want
	g.Sent, w.Sent = time.Time{}, time.Time{}
	if reflect.DeepEqual(g, w) {
		return ""
	}
	gv, wv := reflect.ValueOf(g), reflect.ValueOf(w)
	for i := range gv.NumField() {
		if !reflect.DeepEqual(gv.Field(i).Interface(), wv.Field(i).Interface()) {
			return fmt.Sprintf("field %s differs:\n got %.300v\nwant %.300v", gv.Type().Field(i).Name, gv.Field(i), wv.Field(i))
		}
	}
	return "differs"
}

func TestBatchRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		batch *messages.SampleBatch
	}{
		{name: "realistic", batch: batchOf(t, 512)},
		{name: "full reservoirs", batch: batchOf(t, messages.MaxReservoir)},
		{name: "batch 0", batch: &messages.SampleBatch{Run: "r1", Step: 1, Producer: "p1", Sent: time.Unix(1_750_000_000, 0)}},
		{name: "sent far ahead (12-byte time)", batch: &messages.SampleBatch{Run: "r1", Step: 1, Producer: "p1", Sent: time.Date(3000, 1, 2, 3, 4, 5, 6, time.UTC)}},
		{name: "sent before 1970", batch: &messages.SampleBatch{Run: "r1", Step: 1, Producer: "p1", Sent: time.Date(1969, 7, 20, 20, 17, 0, 0, time.UTC)}},
		{name: "final, during warm-up", batch: &messages.SampleBatch{Run: "r1", Step: 1, Producer: "p1", Seq: 9, Final: true, From: -3e9, To: -1e9, Phases: messages.PhaseList{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := messages.EncodeBatch(tt.batch)
			if err != nil {
				t.Fatalf("EncodeBatch() error = %v", err)
			}
			got, err := messages.DecodeBatch(data)
			if err != nil {
				t.Fatalf("DecodeBatch(EncodeBatch()) error = %v", err)
			}
			if d := diffBatch(got, tt.batch); d != "" {
				t.Errorf("DecodeBatch(EncodeBatch(b)) != b: %s", d)
			}
			for _, p := range got.Phases {
				for _, s := range []messages.Sample{p.Response, p.Service, p.TLS} {
					sk, err := messages.DecodeSketch(s.Sketch)
					if err != nil || sk.GetCount() != float64(s.Count) {
						t.Errorf("phase %v: DecodeSketch() count = %v, %v; want %d", p.Phase, sk.GetCount(), err, s.Count)
					}
				}
			}
		})
	}
}

func TestSampleBatchPhaseStats(t *testing.T) {
	b := batchOf(t, 4)
	b.Phases = b.Phases[2:5]
	if got := b.PhaseStats(messages.Fetch); got == nil || got.Phase != messages.Fetch || got != &b.Phases[2] {
		t.Errorf("PhaseStats(fetch) = %v, want a pointer to the fetch entry", got)
	}
	if got := b.PhaseStats(messages.Dial); got != nil {
		t.Errorf("PhaseStats(dial) = %v, want nil", got)
	}
}

// TestBatchSize reports what a batch costs on the wire and checks that the
// encoder writes compact integers on every call (the pooled encoder's Reset
// clears that flag).
func TestBatchSize(t *testing.T) {
	b := batchOf(t, 512)
	data, err := messages.EncodeBatch(b)
	if err != nil {
		t.Fatalf("EncodeBatch() error = %v", err)
	}
	empty := *b
	empty.Phases = nil
	base, err := messages.EncodeBatch(&empty)
	if err != nil {
		t.Fatalf("EncodeBatch(no phases) error = %v", err)
	}
	t.Logf("batch: %d bytes for %d phases; %d bytes without phases", len(data), len(b.Phases), len(base))
	var values, sketches int
	for _, p := range b.Phases {
		one := empty
		one.Phases = messages.PhaseList{p}
		enc, err := messages.EncodeBatch(&one)
		if err != nil {
			t.Fatalf("EncodeBatch(%v only) error = %v", p.Phase, err)
		}
		n := len(p.Response.Values) + len(p.Service.Values) + len(p.TLS.Values)
		sk := len(p.Response.Sketch) + len(p.Service.Sketch) + len(p.TLS.Sketch)
		values, sketches = values+n, sketches+sk
		t.Logf("  %-6v %6d bytes: %4d latencies, sketches %5d bytes, %d error kinds", p.Phase, len(enc)-len(base), n, sk, len(p.Errors))
	}
	if perValue := float64(len(data)-sketches) / float64(values); perValue > 3.5 {
		t.Errorf("EncodeBatch() = %d bytes besides sketches for %d latencies (%.2f B each), want compact integers (< 3.5 B each)",
			len(data)-sketches, values, perValue)
	}
	plain, err := msgpack.Marshal(b)
	if err != nil {
		t.Fatalf("msgpack.Marshal() error = %v", err)
	}
	if len(data) >= len(plain) {
		t.Errorf("EncodeBatch() = %d bytes, msgpack.Marshal() = %d; want compact integers to save space", len(data), len(plain))
	}
	for i := range 3 {
		again, err := messages.EncodeBatch(b)
		if err != nil || !bytes.Equal(again, data) {
			t.Fatalf("EncodeBatch() call %d = %d bytes, %v; want the same %d bytes every call", i+2, len(again), err, len(data))
		}
	}
}

func TestEncodeBatchConcurrent(t *testing.T) {
	b := batchOf(t, 64)
	want, err := messages.EncodeBatch(b)
	if err != nil {
		t.Fatalf("EncodeBatch() error = %v", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 20 {
				got, err := messages.EncodeBatch(b)
				if err != nil || !bytes.Equal(got, want) {
					errs <- fmt.Errorf("concurrent EncodeBatch() = %d bytes, %v; want %d bytes", len(got), err, len(want))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestBatchValidation checks every rule of SampleBatch.Validate from both
// sides: EncodeBatch refuses the batch, and DecodeBatch refuses its bytes.
func TestBatchValidation(t *testing.T) {
	fetch := func(b *messages.SampleBatch) *messages.PhaseStats { return b.PhaseStats(messages.Fetch) }
	tests := []struct {
		name    string
		mutate  func(*messages.SampleBatch)
		wantErr string // substring; "" means valid
	}{
		{name: "valid", mutate: func(*messages.SampleBatch) {}},
		{name: "no phases", mutate: func(b *messages.SampleBatch) { b.Phases = nil }},
		{name: "largest counts", mutate: func(b *messages.SampleBatch) {
			b.Seq, b.Health.Lost, b.Health.Sessions = math.MaxInt64, math.MaxInt64, math.MaxInt32
		}},
		{name: "empty run", mutate: func(b *messages.SampleBatch) { b.Run = "" }, wantErr: "run: messages: invalid name: empty"},
		{name: "run with a dot", mutate: func(b *messages.SampleBatch) { b.Run = "r.1" }, wantErr: "run: messages: invalid name"},
		{name: "empty producer", mutate: func(b *messages.SampleBatch) { b.Producer = "" }, wantErr: "producer: messages: invalid name"},
		{name: "producer too long", mutate: func(b *messages.SampleBatch) { b.Producer = strings.Repeat("p", 65) }, wantErr: "producer: messages: invalid name"},
		{name: "step 0", mutate: func(b *messages.SampleBatch) { b.Step = 0 }, wantErr: "step: 0"},
		{name: "step above max", mutate: func(b *messages.SampleBatch) { b.Step = messages.MaxStep + 1 }, wantErr: "step: 1000001"},
		{name: "completed > scheduled", mutate: func(b *messages.SampleBatch) { b.Completed = b.Scheduled + 1 }, wantErr: "completed"},
		{name: "integrity checks", mutate: func(b *messages.SampleBatch) { b.Checks = messages.Checks{Run: 5, Failed: 1, Unaddressable: 2} }},
		{name: "more checks failed than run", mutate: func(b *messages.SampleBatch) { b.Checks = messages.Checks{Run: 1, Failed: 2} }, wantErr: "checks: run 1, failed 2"},
		{name: "negative checks", mutate: func(b *messages.SampleBatch) { b.Checks.Unaddressable = math.MaxUint64 }, wantErr: "checks: run"},
		{name: "arrivals", mutate: func(b *messages.SampleBatch) {
			b.Arrivals = messages.Arrivals{Watched: 5, Seen: 7, Missing: 1, Duplicates: 1} // seen late: counted in a later batch
			b.Info.FleetDeliverRate, b.Info.DeliverRate = 20, 10
		}},
		{name: "arrivals wrap", mutate: func(b *messages.SampleBatch) { b.Arrivals = messages.Arrivals{Watched: math.MaxUint64, Seen: 2} }, wantErr: "arrivals: watched"},
		{name: "NaN deliver rate", mutate: func(b *messages.SampleBatch) { b.Info.DeliverRate = math.NaN() }, wantErr: "info: deliver rates 0/NaN"},
		{name: "negative fleet deliver rate", mutate: func(b *messages.SampleBatch) { b.Info.FleetDeliverRate = -1 }, wantErr: "info: deliver rates -1/0"},
		{name: "window backwards", mutate: func(b *messages.SampleBatch) { b.To = b.From - 1 }, wantErr: "window: to"},
		{name: "NaN fleet rate", mutate: func(b *messages.SampleBatch) { b.Info.FleetRate = math.NaN() }, wantErr: "info: rates NaN"},
		{name: "negative rate", mutate: func(b *messages.SampleBatch) { b.Info.Rate = -1 }, wantErr: "info: rates"},
		{name: "rate above max", mutate: func(b *messages.SampleBatch) { b.Info.Rate = 2e7 }, wantErr: "info: rates"},
		{name: "negative producers", mutate: func(b *messages.SampleBatch) { b.Info.Producers = -1 }, wantErr: "info: producers -1"},
		{name: "negative warmup", mutate: func(b *messages.SampleBatch) { b.Info.Warmup = -1 }, wantErr: "warmup -1 ns"},
		{name: "duration above max", mutate: func(b *messages.SampleBatch) { b.Info.Duration = int64(48 * time.Hour) }, wantErr: "out of range"},
		{name: "NaN cpu", mutate: func(b *messages.SampleBatch) { b.Health.CPU = math.NaN() }, wantErr: "health: cpu NaN"},
		{name: "negative cpu", mutate: func(b *messages.SampleBatch) { b.Health.CPU = -0.5 }, wantErr: "health: cpu -0.5"},
		{name: "wrapped seq", mutate: func(b *messages.SampleBatch) { b.Seq = math.MaxUint64 }, wantErr: "seq 18446744073709551615"},
		{name: "wrapped scheduled", mutate: func(b *messages.SampleBatch) { b.Scheduled = 1 << 63 }, wantErr: "scheduled 9223372036854775808"},
		{name: "wrapped health counts", mutate: func(b *messages.SampleBatch) { b.Health.Lost = math.MaxUint64 - 2 }, wantErr: "lost 18446744073709551613"},
		{name: "wrapped sessions", mutate: func(b *messages.SampleBatch) { b.Health.Sessions = math.MaxUint32 }, wantErr: "sessions 4294967295"},
		{name: "unknown phase", mutate: func(b *messages.SampleBatch) { b.Phases[0].Phase = messages.Phase(messages.NumPhases) }, wantErr: "phase"},
		{name: "duplicate phase", mutate: func(b *messages.SampleBatch) { b.Phases[1].Phase = b.Phases[0].Phase }, wantErr: "phase dial: listed twice"},
		{name: "succeeded > attempted", mutate: func(b *messages.SampleBatch) { fetch(b).Succeeded = fetch(b).Attempted + 1 }, wantErr: "succeeded 604 > attempted 603"},
		{name: "errors short of failures", mutate: func(b *messages.SampleBatch) { fetch(b).Attempted++ }, wantErr: "errors add up to 3, attempted − succeeded is 4"},
		{name: "errors beyond failures", mutate: func(b *messages.SampleBatch) { fetch(b).Errors[0].Count++ }, wantErr: "errors add up to 4, attempted − succeeded is 3"},
		{name: "failures without errors", mutate: func(b *messages.SampleBatch) { fetch(b).Errors = nil }, wantErr: "errors add up to 0"},
		{name: "wrapped attempted and error count", mutate: func(b *messages.SampleBatch) {
			p := fetch(b)
			p.Attempted, p.Succeeded, p.Errors = math.MaxUint64, 0, messages.ErrorList{{Kind: "x", Count: math.MaxUint64}}
			p.Response, p.Service = messages.Sample{}, messages.Sample{}
		}, wantErr: "attempted 18446744073709551615"},
		{name: "wrapped dropped", mutate: func(b *messages.SampleBatch) { fetch(b).Dropped = math.MaxUint64 }, wantErr: "dropped 18446744073709551615"},
		{name: "error counts overflow", mutate: func(b *messages.SampleBatch) {
			p := fetch(b)
			p.Attempted, p.Succeeded, p.Response, p.Service = math.MaxInt64, 0, messages.Sample{}, messages.Sample{}
			p.Errors = messages.ErrorList{{Kind: "a", Count: math.MaxInt64}, {Kind: "b", Count: math.MaxInt64}, {Kind: "c", Count: 2}}
		}, wantErr: "error counts overflow"},
		{name: "empty error kind", mutate: func(b *messages.SampleBatch) { fetch(b).Errors[0].Kind = "" }, wantErr: "empty or too long"},
		{name: "error kind too long", mutate: func(b *messages.SampleBatch) { fetch(b).Errors[0].Kind = strings.Repeat("k", messages.MaxKindBytes+1) }, wantErr: "empty or too long"},
		{name: "error example too long", mutate: func(b *messages.SampleBatch) {
			fetch(b).Errors[0].Example = strings.Repeat("e", messages.MaxExampleBytes+1)
		}, wantErr: "empty or too long"},
		{name: "more values than count", mutate: func(b *messages.SampleBatch) { fetch(b).Response.Count = 3 }, wantErr: "phase fetch response: 512 values from count 3"},
		{name: "count without sketch", mutate: func(b *messages.SampleBatch) { fetch(b).Service.Sketch = nil }, wantErr: "phase fetch service"},
		{name: "sketch without count", mutate: func(b *messages.SampleBatch) { fetch(b).TLS.Sketch = sketchOf(t, 1) }, wantErr: "phase fetch tls: 0 values from count 0, sketch"},
		{name: "sketch too large", mutate: func(b *messages.SampleBatch) {
			fetch(b).Response.Sketch = make(messages.SketchBytes, messages.MaxSketchBytes+1)
		}, wantErr: "65537 bytes"},
		{name: "more response latencies than successes", mutate: func(b *messages.SampleBatch) { fetch(b).Response.Count = 601 }, wantErr: "more latencies (601) than successes (600)"},
		{name: "more service latencies than successes", mutate: func(b *messages.SampleBatch) { fetch(b).Service.Count = 601 }, wantErr: "than successes (600)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := batchOf(t, 512)
			tt.mutate(b)
			validErr := b.Validate()
			_, encErr := messages.EncodeBatch(b)
			raw, err := msgpack.Marshal(b) // bypasses Validate, as a hostile producer would
			if err != nil {
				t.Fatalf("msgpack.Marshal() error = %v", err)
			}
			_, decErr := messages.DecodeBatch(raw)
			for _, c := range []struct {
				call string
				err  error
			}{{"Validate()", validErr}, {"EncodeBatch()", encErr}, {"DecodeBatch()", decErr}} {
				switch {
				case tt.wantErr == "" && c.err != nil:
					t.Errorf("%s error = %v, want nil", c.call, c.err)
				case tt.wantErr != "" && !errors.Is(c.err, messages.ErrInvalidBatch):
					t.Errorf("%s error = %v, want errors.Is ErrInvalidBatch", c.call, c.err)
				case tt.wantErr != "" && !strings.Contains(c.err.Error(), tt.wantErr):
					t.Errorf("%s error = %q, want it to mention %q", c.call, c.err, tt.wantErr)
				}
			}
		})
	}
}

func TestEncodeBatchRefusesOversize(t *testing.T) {
	// 8 phases × 2 full reservoirs × 16384 latencies of 5 bytes: about 1.3 MiB.
	full := messages.Sample{Count: messages.MaxReservoir, Values: make(messages.Micros, messages.MaxReservoir), Sketch: sketchOf(t, 1<<31)}
	for i := range full.Values {
		full.Values[i] = 1<<31 + uint32(i)
	}
	b := &messages.SampleBatch{Run: "r1", Step: 1, Producer: "p1"}
	for _, p := range messages.Phases() {
		b.Phases = append(b.Phases, messages.PhaseStats{Phase: p, Attempted: messages.MaxReservoir,
			Succeeded: messages.MaxReservoir, Response: full, Service: full})
	}
	if err := b.Validate(); err != nil {
		t.Fatalf("Validate() error = %v", err)
	}
	_, err := messages.EncodeBatch(b)
	if !errors.Is(err, messages.ErrInvalidBatch) || !strings.Contains(err.Error(), "at most 1048576") {
		t.Errorf("EncodeBatch(1.3 MiB batch) error = %v, want ErrInvalidBatch: at most 1048576", err)
	}
}

// cat concatenates byte strings and single bytes, to write msgpack by hand.
func cat(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch p := p.(type) {
		case int:
			b = append(b, byte(p))
		case rune: // a character literal
			b = append(b, byte(p))
		case string:
			b = append(b, 0xa0|byte(len(p))) // fixstr
			b = append(b, p...)
		case []byte:
			b = append(b, p...)
		default:
			panic(fmt.Sprintf("cat: %T", p))
		}
	}
	return b
}

var (
	claim4G = []byte{0xff, 0xff, 0xff, 0xff}
	// hostilePhases is 14 bytes: {"phases": array32 of 2³²−1 phase entries}
	// and the first byte of them. msgpack v5.4.1 alone would allocate
	// 2³²−1 × sizeof(PhaseStats) before reading one.
	hostilePhases = cat(0x81, "phases", 0xdd, claim4G, 0x80)
	// hostileLatencies claims 2³²−1 latencies in a response reservoir.
	hostileLatencies = cat(0x82, "run", "r1", "phases", 0x91, 0x81, "response", 0x81, "values", 0xdd, claim4G, 0x01, 0x02)
	// hostileSketch claims a 4 GiB bin32 sketch.
	hostileSketch = cat(0x81, "phases", 0x91, 0x81, "response", 0x81, "sketch", 0xc6, claim4G, 0x01)
	// hostileString claims a 4 GiB str32 run id.
	hostileString = cat(0x81, "run", 0xdb, claim4G, 'r')
	// hostileNesting nests arrays a million deep in an unknown field, which
	// msgpack skips recursively: alone, it took 0.8 s and 128 MiB of stack
	// (stack the heap statistics do not show; the time bound catches it).
	hostileNesting = cat(0x81, "x", bytes.Repeat([]byte{0x91}, messages.MaxBatchBytes-4), 0xc0)
)

// rawBatch is a small valid batch as generic msgpack data, for tests that
// write what EncodeBatch never would.
func rawBatch(tb testing.TB) map[string]any {
	return map[string]any{
		"run": "r1", "step": 1, "producer": "p1", "seq": 0, "final": false,
		"from": 0, "to": 1_000_000_000,
		"info":   map[string]any{"fleet_rate": 100.0, "rate": 50.0, "producers": 2, "warmup": int64(1e9), "duration": int64(30e9)},
		"health": map[string]any{"lag_p99": 10, "lag_max": 20, "cpu": 0.1, "sessions": 4},
		"phases": []any{map[string]any{
			"phase": "fetch", "attempted": 3, "succeeded": 2, "dropped": 0,
			"response": map[string]any{"count": 2, "values": []any{100, 200}, "sketch": []byte(sketchOf(tb, 100, 200))},
			"service":  map[string]any{"count": 2, "values": []any{90, 180}, "sketch": []byte(sketchOf(tb, 90, 180))},
			"errors":   []any{map[string]any{"kind": "NO x", "count": 1, "example": "a1 NO x"}},
		}},
	}
}

func rawPhase(m map[string]any) map[string]any { return m["phases"].([]any)[0].(map[string]any) }

func rawSample(m map[string]any) map[string]any { return rawPhase(m)["response"].(map[string]any) }

func marshal(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		tb.Fatalf("msgpack.Marshal() error = %v", err)
	}
	return b
}

func TestDecodeBatchRejects(t *testing.T) {
	withRaw := func(mutate func(m map[string]any)) []byte {
		m := rawBatch(t)
		mutate(m)
		return marshal(t, m)
	}
	valid := withRaw(func(map[string]any) {})
	many := func(n int, v any) []any {
		s := make([]any, n)
		for i := range s {
			s[i] = v
		}
		return s
	}
	tests := []struct {
		name    string
		data    []byte
		wantErr string // substring; "" means valid
	}{
		{name: "valid raw batch", data: valid},
		{name: "unknown fields are skipped", data: withRaw(func(m map[string]any) { m["future"] = map[string]any{"a": []any{1, "x", nil}} })},
		{name: "nil phases", data: withRaw(func(m map[string]any) { m["phases"] = nil })},

		{name: "hostile 14-byte phases claim", data: hostilePhases, wantErr: "claims 4294967295 values"},
		{name: "hostile 2^32 latencies claim", data: hostileLatencies, wantErr: "claims 4294967295 values"},
		{name: "hostile 4 GiB sketch claim", data: hostileSketch, wantErr: "claims 4294967295 bytes"},
		{name: "hostile 4 GiB string claim", data: hostileString, wantErr: "claims 4294967295 bytes"},
		{name: "hostile map claim", data: cat(0xdf, claim4G, "run"), wantErr: "claims 8589934590 values"},
		{name: "hostile ext claim", data: cat(0x81, "sent", 0xc9, claim4G, 0xff), wantErr: "claims 4294967296 bytes"},
		{name: "hostile nesting", data: hostileNesting, wantErr: "nested deeper than 16"},
		{name: "reserved code", data: cat(0x81, "x", 0xc1), wantErr: "code 0xc1 is never used"},

		{name: "one latency over the reservoir cap", data: withRaw(func(m map[string]any) {
			rawSample(m)["values"] = many(messages.MaxReservoir+1, 1)
			rawSample(m)["count"] = messages.MaxReservoir + 1
		}), wantErr: "latencies: 16385 elements, at most 16384"},
		{name: "one phase too many", data: withRaw(func(m map[string]any) { m["phases"] = many(messages.NumPhases+1, rawPhase(m)) }),
			wantErr: fmt.Sprintf("phases: %d elements, at most %d", messages.NumPhases+1, messages.NumPhases)},
		{name: "65 error kinds", data: withRaw(func(m map[string]any) {
			rawPhase(m)["errors"] = many(messages.MaxErrorKinds+1, map[string]any{"kind": "x", "count": 0})
		}), wantErr: "errors: 65 elements, at most 64"},
		{name: "sketch over the cap", data: withRaw(func(m map[string]any) { rawSample(m)["sketch"] = make([]byte, messages.MaxSketchBytes+1) }), wantErr: "sketch: 65537 bytes"},

		{name: "unknown phase name", data: withRaw(func(m map[string]any) { rawPhase(m)["phase"] = "delete" }), wantErr: `unknown phase: "delete"`},
		{name: "phase name too long", data: withRaw(func(m map[string]any) { rawPhase(m)["phase"] = strings.Repeat("f", 17) }), wantErr: "string of 17 bytes"},
		{name: "phase as a number", data: withRaw(func(m map[string]any) { rawPhase(m)["phase"] = 4 }), wantErr: "invalid code"},
		{name: "duplicate phase", data: withRaw(func(m map[string]any) { m["phases"] = many(2, rawPhase(m)) }), wantErr: "listed twice"},
		{name: "succeeded > attempted", data: withRaw(func(m map[string]any) { rawPhase(m)["succeeded"] = 4 }), wantErr: "succeeded 4 > attempted 3"},
		{name: "errors not adding up", data: withRaw(func(m map[string]any) { rawPhase(m)["attempted"] = 5 }), wantErr: "errors add up to 1, attempted − succeeded is 3"},

		{name: "latency 2^32", data: withRaw(func(m map[string]any) { rawSample(m)["values"] = []any{uint64(1 << 32), 1} }), wantErr: "latency 4294967296 µs out of range"},
		{name: "latency uint64 max", data: withRaw(func(m map[string]any) { rawSample(m)["values"] = []any{uint64(math.MaxUint64), 1} }), wantErr: "out of range"},
		{name: "negative latency", data: withRaw(func(m map[string]any) { rawSample(m)["values"] = []any{-1, 1} }), wantErr: "latency 18446744073709551615 µs out of range"},
		{name: "float latency", data: withRaw(func(m map[string]any) { rawSample(m)["values"] = []any{1.5, 1} }), wantErr: "invalid code"},
		{name: "negative seq", data: withRaw(func(m map[string]any) { m["seq"] = -1 }), wantErr: "seq 18446744073709551615"},
		{name: "negative int64 seq", data: withRaw(func(m map[string]any) { m["seq"] = int64(math.MinInt64) }), wantErr: "seq 9223372036854775808"},
		{name: "negative dropped", data: withRaw(func(m map[string]any) { rawPhase(m)["dropped"] = -1 }), wantErr: "dropped 18446744073709551615"},
		{name: "negative count", data: withRaw(func(m map[string]any) { rawSample(m)["count"] = -2 }), wantErr: "out of range"},
		{name: "negative attempted and error count", data: withRaw(func(m map[string]any) {
			p := rawPhase(m)
			p["attempted"], p["succeeded"], p["response"], p["service"] = -1, 0, nil, nil
			p["errors"] = []any{map[string]any{"kind": "x", "count": -1}}
		}), wantErr: "attempted 18446744073709551615"},
		{name: "negative lost", data: withRaw(func(m map[string]any) { m["health"].(map[string]any)["lost"] = -3 }), wantErr: "lost 18446744073709551613"},
		{name: "negative sessions", data: withRaw(func(m map[string]any) { m["health"].(map[string]any)["sessions"] = -1 }), wantErr: "sessions 4294967295"},
		{name: "NaN cpu", data: withRaw(func(m map[string]any) { m["health"].(map[string]any)["cpu"] = math.NaN() }), wantErr: "cpu NaN"},
		{name: "invalid run", data: withRaw(func(m map[string]any) { m["run"] = "r.*" }), wantErr: "run: messages: invalid name"},
		{name: "missing run", data: withRaw(func(m map[string]any) { delete(m, "run") }), wantErr: "run: messages: invalid name: empty"},
		{name: "invalid producer", data: withRaw(func(m map[string]any) { m["producer"] = "p 1" }), wantErr: "producer: messages: invalid name"},
		{name: "run as a number", data: withRaw(func(m map[string]any) { m["run"] = 7 }), wantErr: "invalid code"},

		{name: "trailing byte", data: cat(valid, 0xc0), wantErr: "1 bytes of trailing data"},
		{name: "two batches", data: cat(valid, valid), wantErr: "trailing data"},
		{name: "over 1 MiB", data: cat(0x81, "x", 0xc6, 0x00, 0x10, 0x00, 0x00, make([]byte, 1<<20)), wantErr: "at most 1048576"},
		{name: "empty", data: nil, wantErr: "truncated"},
		{name: "nil value", data: []byte{0xc0}, wantErr: "invalid name: empty"},
		{name: "array", data: []byte{0x93, 1, 2, 3}, wantErr: "messages: invalid sample batch"},
		{name: "string", data: cat("hello"), wantErr: "messages: invalid sample batch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := messages.DecodeBatch(tt.data)
			if tt.wantErr == "" {
				if err != nil || b == nil {
					t.Fatalf("DecodeBatch() = %v, %v; want a batch", b, err)
				}
				return
			}
			if b != nil || !errors.Is(err, messages.ErrInvalidBatch) {
				t.Fatalf("DecodeBatch() = %v, %v; want nil, ErrInvalidBatch", b, err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("DecodeBatch() error = %q, want it to mention %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "decoder panic") {
				t.Errorf("DecodeBatch() recovered a panic: %v", err)
			}
		})
	}
}

// TestDecodeBatchSkipsEveryType puts a value of every msgpack type in an
// unknown field: DecodeBatch's pre-scan must size each one as msgpack does,
// or it would refuse batches from a newer producer.
func TestDecodeBatchSkipsEveryType(t *testing.T) {
	valid := marshal(t, rawBatch(t))
	if valid[0] != 0x80|10 {
		t.Fatalf("raw batch starts with 0x%x, want a fixmap of 10 entries", valid[0])
	}
	withField := func(v []byte) []byte { return cat(0x80|11, valid[1:], "x", v) }
	nested := func(depth int) []byte {
		return cat(bytes.Repeat([]byte{0x91}, depth), 0xc0)
	}
	x8 := bytes.Repeat([]byte{7}, 8)
	tests := []struct {
		name    string
		value   []byte
		wantErr string
	}{
		{name: "positive fixint", value: []byte{0x05}},
		{name: "negative fixint", value: []byte{0xe0}},
		{name: "nil, false, true", value: []byte{0x93, 0xc0, 0xc2, 0xc3}},
		{name: "fixstr", value: cat("abc")},
		{name: "fixarray", value: []byte{0x92, 1, 2}},
		{name: "fixmap", value: cat(0x81, "k", 1)},
		{name: "bin8", value: []byte{0xc4, 2, 'a', 'b'}},
		{name: "bin16", value: []byte{0xc5, 0, 2, 'a', 'b'}},
		{name: "bin32", value: []byte{0xc6, 0, 0, 0, 2, 'a', 'b'}},
		{name: "ext8", value: []byte{0xc7, 2, 5, 'a', 'b'}},
		{name: "ext16", value: []byte{0xc8, 0, 2, 5, 'a', 'b'}},
		{name: "ext32", value: []byte{0xc9, 0, 0, 0, 2, 5, 'a', 'b'}},
		{name: "float32", value: []byte{0xca, 0x3f, 0x80, 0, 0}},
		{name: "float64", value: cat(0xcb, x8)},
		{name: "uint8 to uint64", value: cat(0x94, 0xcc, 1, 0xcd, 1, 2, 0xce, 1, 2, 3, 4, 0xcf, x8)},
		{name: "int8 to int64", value: cat(0x94, 0xd0, 1, 0xd1, 1, 2, 0xd2, 1, 2, 3, 4, 0xd3, x8)},
		{name: "fixext 1 to 16", value: cat(0x95, 0xd4, 5, 1, 0xd5, 5, 1, 2, 0xd6, 5, x8[:4], 0xd7, 5, x8, 0xd8, 5, x8, x8)},
		{name: "str8", value: []byte{0xd9, 2, 'a', 'b'}},
		{name: "str16", value: []byte{0xda, 0, 2, 'a', 'b'}},
		{name: "str32", value: []byte{0xdb, 0, 0, 0, 2, 'a', 'b'}},
		{name: "array16", value: []byte{0xdc, 0, 2, 1, 2}},
		{name: "array32", value: []byte{0xdd, 0, 0, 0, 2, 1, 2}},
		{name: "map16", value: cat(0xde, 0, 1, "k", 1)},
		{name: "map32", value: cat(0xdf, 0, 0, 0, 1, "k", 1)},
		{name: "empty containers", value: []byte{0x93, 0x90, 0x80, 0xdc, 0, 0}},
		{name: "nested 15 deep", value: nested(15)},
		{name: "nested 16 deep", value: nested(16), wantErr: "nested deeper than 16"},
		{name: "str8 cut short", value: []byte{0xd9, 200, 'a'}, wantErr: "header claims 200 bytes"},
		{name: "fixext16 cut short", value: []byte{0xd8, 5, 1}, wantErr: "header claims 17 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := withField(tt.value)
			var raw msgpack.RawMessage // msgpack's own view: the value is well formed
			if tt.wantErr == "" {
				if err := msgpack.Unmarshal(tt.value, &raw); err != nil {
					t.Fatalf("msgpack.Unmarshal(% x) error = %v; the test value is not msgpack", tt.value, err)
				}
			}
			b, err := messages.DecodeBatch(data)
			switch {
			case tt.wantErr == "" && (err != nil || b == nil):
				t.Errorf("DecodeBatch(batch with x: % x) = %v, %v; want a batch", tt.value, b, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("DecodeBatch(batch with x: % x) error = %v, want one mentioning %q", tt.value, err, tt.wantErr)
			}
		})
	}
}

func TestDecodeBatchTruncated(t *testing.T) {
	for _, tt := range []struct {
		name   string
		batch  *messages.SampleBatch
		stride int
	}{
		{name: "every prefix of a small batch", batch: batchOf(t, 4), stride: 1},
		{name: "prefixes of a realistic batch", batch: batchOf(t, 512), stride: 97},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data, err := messages.EncodeBatch(tt.batch)
			if err != nil {
				t.Fatalf("EncodeBatch() error = %v", err)
			}
			t.Logf("%d bytes, every %d prefix lengths", len(data), tt.stride)
			for n := 0; n < len(data); n += tt.stride {
				b, err := messages.DecodeBatch(data[:n])
				if b != nil || !errors.Is(err, messages.ErrInvalidBatch) || strings.Contains(err.Error(), "decoder panic") {
					t.Fatalf("DecodeBatch(first %d of %d bytes) = %v, %v; want nil, ErrInvalidBatch", n, len(data), b, err)
				}
			}
		})
	}
}

// Allocation bounds. The acceptance criterion is that hostile batches are
// refused without large allocation (< 1 MiB per decode); the decoder does
// far better, and the test holds it to that so that a regression shows.
// Bounded work shows as bounded allocation; time is for the benchmarks.
const (
	maxHostileBytes  = 64 << 10
	maxHostileAllocs = 40
)

// cost runs f n times and returns its allocations and bytes allocated, each
// per run.
func cost(n int, f func()) (allocs float64, bytes uint64) {
	allocs = testing.AllocsPerRun(n, f)
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	for range n {
		f()
	}
	runtime.ReadMemStats(&m1)
	return allocs, (m1.TotalAlloc - m0.TotalAlloc) / uint64(n)
}

func TestDecodeBatchHostileAllocation(t *testing.T) {
	tests := []struct {
		name string
		data []byte
	}{
		{name: "14-byte phases claim", data: hostilePhases},
		{name: "2^32 latencies claim", data: hostileLatencies},
		{name: "4 GiB sketch claim", data: hostileSketch},
		{name: "4 GiB string claim", data: hostileString},
		{name: "nesting", data: hostileNesting},
	}
	if len(hostilePhases) != 14 {
		t.Fatalf("hostilePhases is %d bytes, want 14", len(hostilePhases))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			allocs, bytes := cost(20, func() { _, err = messages.DecodeBatch(tt.data) })
			if !errors.Is(err, messages.ErrInvalidBatch) {
				t.Fatalf("DecodeBatch(%d hostile bytes) error = %v, want ErrInvalidBatch", len(tt.data), err)
			}
			t.Logf("DecodeBatch(%d bytes): %.0f allocs, %d B allocated: %v", len(tt.data), allocs, bytes, err)
			if bytes > maxHostileBytes || allocs > maxHostileAllocs {
				t.Errorf("DecodeBatch(%d hostile bytes) allocated %d B in %.0f allocs, want ≤ %d B and ≤ %d allocs",
					len(tt.data), bytes, allocs, maxHostileBytes, maxHostileAllocs)
			}
		})
	}
}

// TestUnmarshalHostileAllocation checks the bounded decoders of the slice
// types themselves: code that hands a batch to msgpack.Unmarshal, without
// DecodeBatch's pre-scan, is still safe from hostile slice lengths.
func TestUnmarshalHostileAllocation(t *testing.T) {
	tests := []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{name: "14-byte phases claim", data: hostilePhases, wantErr: fmt.Sprintf("phases: 4294967295 elements, at most %d", messages.NumPhases)},
		{name: "2^32 latencies claim", data: hostileLatencies, wantErr: "latencies: 4294967295 elements, at most 16384"},
		{name: "4 GiB sketch claim", data: hostileSketch, wantErr: "sketch: 4294967295 bytes, at most 65536"},
		{name: "2^32 error kinds claim", data: cat(0x81, "phases", 0x91, 0x81, "errors", 0xdd, claim4G, 0x80), wantErr: "errors: 4294967295 elements, at most 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			allocs, bytes := cost(20, func() {
				var b messages.SampleBatch
				err = msgpack.Unmarshal(tt.data, &b)
			})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("msgpack.Unmarshal(%d hostile bytes) error = %v, want one mentioning %q", len(tt.data), err, tt.wantErr)
			}
			t.Logf("msgpack.Unmarshal(%d bytes): %.0f allocs, %d B allocated", len(tt.data), allocs, bytes)
			if bytes > maxHostileBytes || allocs > maxHostileAllocs {
				t.Errorf("msgpack.Unmarshal(%d hostile bytes) allocated %d B in %.0f allocs, want ≤ %d B and ≤ %d allocs",
					len(tt.data), bytes, allocs, maxHostileBytes, maxHostileAllocs)
			}
		})
	}
}

func TestDecodeBatchCost(t *testing.T) {
	data, err := messages.EncodeBatch(batchOf(t, 512))
	if err != nil {
		t.Fatalf("EncodeBatch() error = %v", err)
	}
	allocs, bytes := cost(20, func() { _, err = messages.DecodeBatch(data) })
	if err != nil {
		t.Fatalf("DecodeBatch() error = %v", err)
	}
	t.Logf("DecodeBatch(%d bytes): %.0f allocs, %d B allocated (%.1f× input)", len(data), allocs, bytes, float64(bytes)/float64(len(data)))
	if bytes > 8*uint64(len(data))+maxHostileBytes {
		t.Errorf("DecodeBatch(%d bytes) allocated %d B, want about the decoded size", len(data), bytes)
	}
}
