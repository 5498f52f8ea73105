package reporter

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
)

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal() error = %v", err)
	}
	return b
}

func TestDecodeResult(t *testing.T) {
	good := goldenSteps()[0]
	tests := []struct {
		name     string
		data     string
		wantKind string
		wantStep int // 0 = no result
		wantErr  string
	}{
		{name: "step result", data: string(mustJSON(t, good)), wantKind: messages.KindStepResult, wantStep: 4},
		{name: "step result with an unknown field", data: `{"kind":"step_result","run":"r1","step":2,"target_rate":10,"new_field":[1]}`, wantKind: messages.KindStepResult, wantStep: 2},
		{name: "run report is skipped", data: string(mustJSON(t, Build("r1", nil, 0, fixedNow))), wantKind: messages.KindRunReport},
		{name: "not JSON", data: `{"kind":`, wantErr: "malformed JSON"},
		{name: "trailing data", data: `{"kind":"step_result"} x`, wantErr: "malformed JSON"},
		{name: "missing kind", data: `{"run":"r1"}`, wantErr: `kind ""`},
		{name: "unknown kind", data: `{"kind":"step_results"}`, wantKind: "step_results", wantErr: `kind "step_results"`},
		{name: "wrong type", data: `{"kind":"step_result","step":"four"}`, wantKind: messages.KindStepResult, wantErr: "cannot unmarshal"},
		{name: "bad run", data: `{"kind":"step_result","run":"a.b","step":1,"target_rate":1}`, wantKind: messages.KindStepResult, wantErr: "run:"},
		{name: "step 0", data: `{"kind":"step_result","run":"r1","step":0,"target_rate":1}`, wantKind: messages.KindStepResult, wantErr: "step 0, want 1.."},
		{name: "zero target", data: `{"kind":"step_result","run":"r1","step":1}`, wantKind: messages.KindStepResult, wantErr: "want target > 0"},
		{name: "negative ratio", data: `{"kind":"step_result","run":"r1","step":1,"target_rate":5,"ratio":-1}`, wantKind: messages.KindStepResult, wantErr: "want target > 0"},
		{name: "too large", data: `{"kind":"step_result","pad":"` + strings.Repeat("x", messages.MaxResultBytes) + `"}`, wantErr: "at most"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, res, err := DecodeResult([]byte(tt.data))
			if kind != tt.wantKind {
				t.Errorf("DecodeResult() kind = %q, want %q", kind, tt.wantKind)
			}
			if tt.wantErr != "" {
				if !errors.Is(err, ErrInvalidResult) || !strings.Contains(err.Error(), tt.wantErr) || res != nil {
					t.Errorf("DecodeResult() = %v, %v, want nil and an ErrInvalidResult containing %q", res, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeResult() error = %v", err)
			}
			if got := stepOf(res); got != tt.wantStep {
				t.Errorf("DecodeResult() step = %d, want %d", got, tt.wantStep)
			}
		})
	}
}

func TestDecodeResultRoundTrip(t *testing.T) {
	for _, want := range goldenSteps() {
		_, got, err := DecodeResult(mustJSON(t, want))
		if err != nil {
			t.Fatalf("DecodeResult(step %d) error = %v", want.Step, err)
		}
		if !reflect.DeepEqual(*got, want) {
			t.Errorf("DecodeResult(step %d) = %+v, want %+v", want.Step, *got, want)
		}
	}
}

func stepOf(res *messages.StepResult) int {
	if res == nil {
		return 0
	}
	return res.Step
}

// FuzzRenderResult checks that a step result DecodeResult accepts is one the
// report can use: built into a report, it renders. (messages'
// FuzzDecodeResult fuzzes the decoding itself.)
//
// Its seeds are a few hundred bytes, not golden steps (3 KB) or a report
// (14 KB): the fuzzer minimizes every input that finds new coverage, one
// run per byte cut, and each run of this package's test binary (it links
// the embedded NATS and IMAP servers) copies ~190 KB of coverage counters.
// With those seeds it spent its time minimizing: 10 inputs in 45 s.
func FuzzRenderResult(f *testing.F) {
	for _, seed := range []string{
		`{"kind":"step_result","run":"r1","step":4,"target_rate":2000,"delivered_rate":1560,"ratio":0.78,"duration":"30s",` +
			`"complete":true,"producers":["p1"],"phases":{"login":{"count":9,"attempted":9,"p50":0.2,"p99":58,"max":174,` +
			`"ci":{"p99":[55,null]},"bimodal":{"low_mode":0.2,"high_mode":58,"low_share":0.6,"high_share":0.4}}},` +
			`"errors":[{"phase":"fetch","kind":"NO","count":1}],"per_producer":[{"producer":"p1","count":9,"share":1,"p99":4}]}`,
		`{"kind":"step_result","run":"r1","step":2,"target_rate":500,"ratio":1,"missing":["p3"],"generator_saturated":true,` +
			`"health":{"cpu_max":0.97,"saturated_producers":["p2"]}}`,
		`{"kind":"step_result","run":"r1","step":1,"target_rate":1e308,"phases":{"x":{"p99":-1}}}`,
		`{"kind":"run_report","run":"r1","steps":[]}`,
		`{"kind":"run_report"}`,
		`[]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		kind, res, err := DecodeResult(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidResult) || !errors.Is(err, messages.ErrInvalidResult) || res != nil {
				t.Fatalf("DecodeResult() = %v, %v: want nil and an ErrInvalidResult", res, err)
			}
			return
		}
		if (kind == messages.KindStepResult) != (res != nil) {
			t.Fatalf("DecodeResult() kind %q with result %v", kind, res)
		}
		if res == nil {
			return
		}
		if err := res.Validate(); err != nil {
			t.Fatalf("DecodeResult() accepted an invalid result: %v", err)
		}
		rep := Build(res.Run, []messages.StepResult{*res}, 0, fixedNow)
		if err := RenderTable(discard{}, rep); err != nil {
			t.Fatalf("RenderTable(accepted result) error = %v", err)
		}
		if err := RenderCSV(discard{}, rep); err != nil {
			t.Fatalf("RenderCSV(accepted result) error = %v", err)
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
