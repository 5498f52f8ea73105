package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// TestDemoTLS: `imapload demo --tls` serves implicit TLS and its producers
// dial it, trusting the server's own certificate. (They dialled plaintext:
// nothing was delivered, no error was counted, and a busy machine was
// blamed.) Judged on what was measured, not on speed: commands succeeded
// on a server that speaks only TLS, the dials in the window have TLS
// handshake figures and no dial failed.
func TestDemoTLS(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "report")
	o := runOnce(t, []string{"TMPDIR=" + t.TempDir()}, 2*time.Minute,
		"demo", "--tls", "--rates", "100", "--step-duration", "2s", "--out", dir, "--saturation-lag", "1h")
	if o.code != verdict.ExitOK && o.code != verdict.ExitInconclusive {
		t.Fatalf("imapload demo --tls = %s\nwant exit 0 (or 4 on a busy host)", o)
	}
	data, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatalf("report.json: %v\n%s", err, o)
	}
	var rep messages.RunReport
	if err := json.Unmarshal(data, &rep); err != nil || len(rep.Steps) != 1 {
		t.Fatalf("report.json: %v, %d steps; want one step", err, len(rep.Steps))
	}
	s := rep.Steps[0]
	if s.Succeeded == 0 {
		t.Errorf("demo --tls step: no command succeeded; want commands served over TLS (the server speaks nothing else)")
	}
	// Dials are counted in the window they start in; on a busy host every
	// session may have dialled during the warm-up, leaving none in the
	// window. Those that are counted must carry TLS handshake figures.
	if dial := s.Phases[messages.Dial.String()]; dial.Count > 0 && (dial.TLS == nil || dial.TLS.P50 <= 0) {
		t.Errorf("demo --tls step: %d dials in the window, TLS figures %+v; want a handshake time for each", dial.Count, dial.TLS)
	}
	for _, e := range s.Errors {
		if e.Phase == messages.Dial.String() {
			t.Errorf("demo --tls step: dial errors %q (%d); want none", e.Kind, e.Count)
		}
	}
}
