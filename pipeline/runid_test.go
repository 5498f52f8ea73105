package pipeline_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/imapload/imapload/ramp"
)

// TestRunIDReused: the same run id twice on one NATS store (as `imapload
// ramp --run x1` twice, or `imapload run --run x1 --store DIR` twice) is
// refused the second time before any step command, so the IMAP server sees
// no command of it, and the error names the id and the way out. (It used to
// be accepted, run nothing, and end after the result wait asking whether an
// aggregator was running.)
func TestRunIDReused(t *testing.T) {
	srv := startIMAP(t)
	o := shortRun(t, srv, 1)
	o.Run, o.StoreDir = "x1", t.TempDir()
	if _, err := runCtx(t, o); err != nil {
		t.Fatalf("first Run(x1) error = %v", err)
	}
	before := srv.Stats()
	results, err := runCtx(t, o)
	if !errors.Is(err, ramp.ErrRunUsed) || len(results) != 0 {
		t.Fatalf("second Run(x1) = %d results, error %v; want none and ErrRunUsed", len(results), err)
	}
	for _, want := range []string{"run x1 already has results (step 1, the first published ", "use a fresh one, or --run auto"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("second Run(x1) error = %q, want it to say %q", err, want)
		}
	}
	if after := srv.Stats(); after.Commands != before.Commands {
		t.Errorf("IMAP server saw %d commands during the refused run, want none", after.Commands-before.Commands)
	}
}
