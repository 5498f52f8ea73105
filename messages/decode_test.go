package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("json.Marshal() error = %v", err)
	}
	return b
}

func testReport() RunReport {
	step := noisyResult()
	return RunReport{Kind: KindRunReport, Run: "r1", Verdict: RunKnee, Threshold: 0.9, Steps: []StepResult{step},
		Knee: &Knee{Step: 3, Rate: 4000, DeliveredRate: 3598.4, Ratio: 0.8996, Threshold: 0.9}, Invalid: []int{},
		Findings: []string{}, Generated: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
}

func TestResultKind(t *testing.T) {
	tests := []struct {
		name     string
		data     string
		wantKind string
		wantErr  string
	}{
		{name: "step result", data: `{"kind":"step_result"}`, wantKind: KindStepResult},
		{name: "run report", data: `{"kind":"run_report","run":"r1"}`, wantKind: KindRunReport},
		{name: "not JSON", data: `{"kind":`, wantErr: "malformed JSON"},
		{name: "trailing data", data: `{"kind":"step_result"} x`, wantErr: "malformed JSON"},
		{name: "missing kind", data: `{"run":"r1"}`, wantErr: `kind ""`},
		{name: "unknown kind", data: `{"kind":"step_results"}`, wantKind: "step_results", wantErr: `kind "step_results"`},
		{name: "too large", data: `{"kind":"step_result","pad":"` + strings.Repeat("x", MaxResultBytes) + `"}`, wantErr: "at most"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, err := ResultKind([]byte(tt.data))
			if kind != tt.wantKind {
				t.Errorf("ResultKind() = %q, want %q", kind, tt.wantKind)
			}
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (!errors.Is(err, ErrInvalidResult) || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("ResultKind() error = %v, want an ErrInvalidResult containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestDecodeResult(t *testing.T) {
	tests := []struct {
		name     string
		data     string
		wantStep int
		wantErr  string // "" means valid
	}{
		{name: "step result", data: string(mustJSON(t, noisyResult())), wantStep: 3},
		{name: "with an unknown field", data: `{"kind":"step_result","run":"r1","step":2,"target_rate":10,"new_field":[1]}`, wantStep: 2},
		{name: "run report", data: string(mustJSON(t, testReport())), wantErr: `kind "run_report", want "step_result"`},
		{name: "not JSON", data: `{"kind":`, wantErr: "malformed JSON"},
		{name: "wrong type", data: `{"kind":"step_result","step":"four"}`, wantErr: "cannot unmarshal"},
		{name: "bad run", data: `{"kind":"step_result","run":"a.b","step":1,"target_rate":1}`, wantErr: "run:"},
		{name: "step 0", data: `{"kind":"step_result","run":"r1","step":0,"target_rate":1}`, wantErr: "step 0, want 1.."},
		{name: "zero target", data: `{"kind":"step_result","run":"r1","step":1}`, wantErr: "want target > 0"},
		{name: "negative ratio", data: `{"kind":"step_result","run":"r1","step":1,"target_rate":5,"ratio":-1}`, wantErr: "want target > 0"},
		{name: "negative revision", data: `{"kind":"step_result","run":"r1","step":1,"target_rate":5,"revision":-1}`, wantErr: "revision -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := DecodeResult([]byte(tt.data))
			if tt.wantErr != "" {
				if r != nil || !errors.Is(err, ErrInvalidResult) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("DecodeResult() = %v, %v; want nil and an ErrInvalidResult containing %q", r, err, tt.wantErr)
				}
				return
			}
			if err != nil || r.Step != tt.wantStep {
				t.Fatalf("DecodeResult() = %v, %v; want step %d", r, err, tt.wantStep)
			}
		})
	}
}

func TestDecodeRunReport(t *testing.T) {
	with := func(f func(*RunReport)) string {
		rep := testReport()
		f(&rep)
		return string(mustJSON(t, rep))
	}
	tests := []struct {
		name    string
		data    string
		wantErr string // "" means valid
	}{
		{name: "run report", data: with(func(*RunReport) {})},
		{name: "no steps", data: `{"kind":"run_report","run":"r1","verdict":"inconclusive","threshold":0.9,"knee":null,"steps":[]}`},
		{name: "step result", data: string(mustJSON(t, noisyResult())), wantErr: `kind "step_result", want "run_report"`},
		{name: "bad run", data: with(func(r *RunReport) { r.Run = "" }), wantErr: "run report: run:"},
		{name: "negative threshold", data: with(func(r *RunReport) { r.Threshold = -1 }), wantErr: "threshold -1"},
		{name: "knee at step 0", data: with(func(r *RunReport) { r.Knee.Step = 0 }), wantErr: "knee at step 0"},
		{name: "last held step 0", data: with(func(r *RunReport) { r.LastHeld = &StepRef{} }), wantErr: "last held step 0"},
		{name: "invalid step", data: with(func(r *RunReport) { r.Steps[0].TargetRate = 0 }), wantErr: "want target > 0"},
		{name: "step of another run", data: with(func(r *RunReport) { r.Steps[0].Run = "r2" }), wantErr: `step 3 is of run "r2"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := DecodeRunReport([]byte(tt.data))
			if tt.wantErr != "" {
				if rep != nil || !errors.Is(err, ErrInvalidResult) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("DecodeRunReport() = %v, %v; want nil and an ErrInvalidResult containing %q", rep, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeRunReport() error = %v", err)
			}
			if again := mustJSON(t, rep); !bytes.Equal(again, []byte(tt.data)) && tt.name == "run report" {
				t.Errorf("DecodeRunReport() re-encodes as\n%s\nwant\n%s", again, tt.data)
			}
		})
	}
}

func TestDecodeStepReply(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		wantErr string // "" means valid
	}{
		{name: "accepted", data: `{"producer":"p1","run":"r1","step":2,"accepted":true,"rate":250,"producers":4}`},
		{name: "refused, command unparsable", data: `{"producer":"p1","accepted":false,"error":"rate: missing","problems":["rate: missing"]}`},
		{name: "not JSON", data: `{"producer":`, wantErr: "malformed JSON"},
		{name: "no producer", data: `{"accepted":true}`, wantErr: "producer:"},
		{name: "bad run", data: `{"producer":"p1","run":"a b"}`, wantErr: "run:"},
		{name: "negative step", data: `{"producer":"p1","step":-1}`, wantErr: "step: -1"},
		{name: "negative rate", data: `{"producer":"p1","rate":-1}`, wantErr: "out of range"},
		{name: "accepted with an error", data: `{"producer":"p1","accepted":true,"error":"x"}`, wantErr: "accepted with an error"},
		{name: "too large", data: `{"producer":"p1","error":"` + strings.Repeat("x", MaxReplyBytes) + `"}`, wantErr: "at most"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := DecodeStepReply([]byte(tt.data))
			if tt.wantErr != "" {
				if r != nil || !errors.Is(err, ErrInvalidReply) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("DecodeStepReply() = %v, %v; want nil and an ErrInvalidReply containing %q", r, err, tt.wantErr)
				}
				return
			}
			if err != nil || r.Producer != "p1" {
				t.Fatalf("DecodeStepReply() = %v, %v; want producer p1", r, err)
			}
		})
	}
}

// resultSeeds are a few hundred bytes each: the fuzzer minimizes every
// input that finds new coverage, one run per byte cut.
var resultSeeds = []string{
	`{"kind":"step_result","run":"r1","step":4,"target_rate":2000,"delivered_rate":1560,"ratio":0.78,"duration":"30s",` +
		`"complete":true,"producers":["p1"],"phases":{"login":{"count":9,"attempted":9,"p50":0.2,"p99":58,"max":174,` +
		`"ci":{"p99":[55,null]},"bimodal":{"low_mode":0.2,"high_mode":58,"low_share":0.6,"high_share":0.4}}},` +
		`"errors":[{"phase":"fetch","kind":"NO","count":1}],"per_producer":[{"producer":"p1","count":9,"share":1,"p99":4}]}`,
	`{"kind":"step_result","run":"r1","step":2,"target_rate":500,"ratio":1,"missing":["p3"],"generator_saturated":true,` +
		`"health":{"cpu_max":0.97,"saturated_producers":["p2"]},"generated":"2026-12-01T10:00:00+01:00"}`,
	`{"kind":"step_result","run":"r1","step":1,"target_rate":1e308,"phases":{"x":{"p99":-1}}}`,
	`{"kind":"run_report","run":"r1","verdict":"knee","threshold":0.9,"knee":{"step":2,"rate":500},` +
		`"steps":[{"kind":"step_result","run":"r1","step":2,"target_rate":500,"ratio":0.5}]}`,
	`{"kind":"run_report"}`,
	`[]`,
}

// roundTrip checks that v, once accepted, encodes to JSON that decode
// accepts and that encodes the same again.
func roundTrip[T any](t *testing.T, v *T, decode func([]byte) (*T, error)) {
	t.Helper()
	out := mustJSON(t, v)
	back, err := decode(out)
	if err != nil {
		t.Fatalf("decoding an accepted message re-encoded: %v\n%s", err, out)
	}
	if again := mustJSON(t, back); !bytes.Equal(again, out) {
		t.Fatalf("re-encoded message differs:\n%s\nwant\n%s", again, out)
	}
}

// FuzzDecodeResult checks that no input panics, that every refusal wraps
// ErrInvalidResult, and that an accepted step result validates and
// survives a JSON round trip.
func FuzzDecodeResult(f *testing.F) {
	for _, seed := range resultSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeResult(data)
		if err != nil {
			if r != nil || !errors.Is(err, ErrInvalidResult) {
				t.Fatalf("DecodeResult() = %v, %v; want nil and an ErrInvalidResult", r, err)
			}
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("DecodeResult() accepted an invalid result: %v", err)
		}
		_ = r.Summary()
		roundTrip(t, r, DecodeResult)
	})
}

// FuzzDecodeRunReport is FuzzDecodeResult for run reports.
func FuzzDecodeRunReport(f *testing.F) {
	for _, seed := range resultSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := DecodeRunReport(data)
		if err != nil {
			if rep != nil || !errors.Is(err, ErrInvalidResult) {
				t.Fatalf("DecodeRunReport() = %v, %v; want nil and an ErrInvalidResult", rep, err)
			}
			return
		}
		if err := rep.Validate(); err != nil {
			t.Fatalf("DecodeRunReport() accepted an invalid report: %v", err)
		}
		_ = rep.Summary()
		roundTrip(t, rep, DecodeRunReport)
	})
}

// FuzzDecodeStepReply is FuzzDecodeResult for step replies.
func FuzzDecodeStepReply(f *testing.F) {
	for _, seed := range []string{
		`{"producer":"p1","run":"r1","step":2,"accepted":true,"rate":250,"producers":4}`,
		`{"producer":"p1","accepted":false,"error":"rate: missing","problems":["rate: missing"]}`,
		`{"producer":"p 1","step":-1,"rate":1e400}`, `null`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeStepReply(data)
		if err != nil {
			if r != nil || !errors.Is(err, ErrInvalidReply) {
				t.Fatalf("DecodeStepReply() = %v, %v; want nil and an ErrInvalidReply", r, err)
			}
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("DecodeStepReply() accepted an invalid reply: %v", err)
		}
		roundTrip(t, r, DecodeStepReply)
	})
}
