package progress

import (
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
)

func TestTrackerLine(t *testing.T) {
	cmd, err := messages.ParseStepCommand([]byte(`{"run":"r1","step":2,"rate":300,"duration":"10s","warmup":"1s"}`))
	if err != nil {
		t.Fatal(err)
	}
	tr := NewTracker(cmd)
	for _, p := range []string{"p1", "p2", "p3"} {
		tr.Add(&messages.SampleBatch{Run: "r1", Step: 2, Producer: p, To: int64(2 * time.Second), Completed: 180, Scheduled: 200,
			Health: messages.Health{Dropped: 1},
			Phases: messages.PhaseList{{Phase: messages.Login, Attempted: 3, Succeeded: 1,
				Errors: messages.ErrorList{{Kind: "NO [AUTHENTICATIONFAILED] x", Count: 2}}}}})
	}
	tr.Add(&messages.SampleBatch{Run: "r1", Step: 3, Producer: "p1", Completed: 1000}) // another step: ignored
	if got, want := tr.Delivered(), 270.0; got != want {
		t.Errorf("Tracker.Delivered() = %v, want %v", got, want)
	}
	line := tr.Line(3 * time.Second)
	for _, want := range []string{"step 2", "3.0s/11s", "target 300/s", "delivered 270/s (90%)", "errors 6", "dropped 3", "producers 3", "login: NO [AUTHENTICATIONFAILED] x ×6"} {
		if !strings.Contains(line, want) {
			t.Errorf("Tracker.Line() = %q, want it to contain %q", line, want)
		}
	}
	tr.Add(&messages.SampleBatch{Run: "r1", Step: 2, Producer: "p2", Health: messages.Health{Saturated: true, CPU: 0.01, CPULimit: 1, RunDelay: 0.4}})
	if line, want := tr.Line(4*time.Second), "BEHIND SCHEDULE: p2 (host_overloaded)"; !strings.Contains(line, want) {
		t.Errorf("Tracker.Line() = %q, want it to contain %q", line, want)
	}
	if line := tr.Line(500 * time.Millisecond); !strings.Contains(line, "(warm-up)") {
		t.Errorf("Tracker.Line(warm-up) = %q, want (warm-up)", line)
	}
}
