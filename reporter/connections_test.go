package reporter

import (
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
)

// connectionRamp is a connection ramp at 200/s: 1000 and 2000 connections
// held, 4000 asked and 3100 held (the knee).
func connectionRamp() []messages.StepResult {
	var steps []messages.StepResult
	for i, c := range []struct {
		conns int
		held  uint64
	}{{1000, 1000}, {2000, 2000}, {4000, 3100}} {
		s := stepResult(i+1, 200, 200)
		s.Connections = &messages.ConnectionsResult{Target: c.conns, Offered: c.conns, Held: c.held, HeldAtEnd: c.held,
			SetupAttempted: 10, SetupFailed: 0}
		steps = append(steps, s)
	}
	return steps
}

func TestRenderTableConnections(t *testing.T) {
	rep := Build("golden", connectionRamp(), 0, fixedNow)
	if rep.MostHeld == nil || rep.MostHeld.Step != 2 || rep.Knee == nil || rep.Knee.Step != 3 {
		t.Fatalf("Build() most held %+v, knee %+v; want step 2, step 3", rep.MostHeld, rep.Knee)
	}
	var b strings.Builder
	if err := RenderTable(&b, rep); err != nil {
		t.Fatalf("RenderTable() error = %v", err)
	}
	for _, want := range []string{
		"connections: 3100 of 4000 held through the window (4000 asked), 3100 at its end, 0 dropped; set-ups 10, 0 failed",
		"below on held connections: 3100 of 4000 held through the window (77.5%, under 90%)",
		"knee:      step 3 at 4000 held connections and 200/s offered: below on held connections",
		"most held: step 2 held 2000 IDLE connections (of 2000 asked) with 200/s intact (ratio 1.00)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("RenderTable() lacks %q:\n%s", want, b.String())
		}
	}
}
