package reporter

import (
	"encoding/json"
	"testing"

	"github.com/imapload/imapload/messages"
)

func TestFitReport(t *testing.T) {
	rep := Build("golden", goldenSteps(), 0, fixedNow)
	full, _ := json.Marshal(rep)
	rep.Steps[0].PerProducer = nil
	tests := []struct {
		name          string
		limit         int64
		wantSteps     int
		wantProducers bool
		wantErr       bool
	}{
		{name: "fits whole", limit: int64(len(full)), wantSteps: 5, wantProducers: true},
		{name: "without per-producer breakdowns", limit: int64(len(full)) - 100, wantSteps: 5},
		{name: "without steps", limit: 2000, wantSteps: 0},
		{name: "too small even so", limit: 100, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := fitReport(Build("golden", goldenSteps(), 0, fixedNow), tt.limit)
			if tt.wantErr {
				if err == nil {
					t.Errorf("fitReport(limit %d) error = nil, want one", tt.limit)
				}
				return
			}
			if err != nil || int64(len(data)) > tt.limit {
				t.Fatalf("fitReport(limit %d) = %d bytes, %v", tt.limit, len(data), err)
			}
			var got messages.RunReport
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatalf("fitReport() JSON: %v", err)
			}
			if len(got.Steps) != tt.wantSteps || got.Knee == nil || got.Knee.Step != 4 {
				t.Errorf("fitReport(limit %d) steps %d, knee %+v, want %d steps and the knee at step 4", tt.limit, len(got.Steps), got.Knee, tt.wantSteps)
			}
			if has := len(got.Steps) > 0 && got.Steps[0].PerProducer != nil; has != tt.wantProducers {
				t.Errorf("fitReport(limit %d) per-producer breakdowns kept = %v, want %v", tt.limit, has, tt.wantProducers)
			}
		})
	}
}

// TestAcceptKeepsLatestRevision: a step re-opened by late batches is
// published again with a higher revision; the report uses it, whatever
// order the revisions are read in.
func TestAcceptKeepsLatestRevision(t *testing.T) {
	r := &Reporter{runs: map[string]*runState{}}
	rev := func(n int, ratio float64) *messages.StepResult {
		return &messages.StepResult{Kind: messages.KindStepResult, Run: "r", Step: 1, TargetRate: 100, Ratio: ratio, Revision: n}
	}
	r.accept(rev(0, 0.4), 1)
	r.accept(rev(2, 0.99), 3)
	r.accept(rev(1, 0.7), 2)
	if got := r.runs["r"].steps[1]; got.Revision != 2 || got.Ratio != 0.99 {
		t.Errorf("step 1 kept revision %d (ratio %v), want revision 2 (ratio 0.99)", got.Revision, got.Ratio)
	}
}
