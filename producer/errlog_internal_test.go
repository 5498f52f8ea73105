package producer

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
)

// TestFirstErrorsBounded checks that each (phase, kind) is logged once, and
// that past maxLoggedKinds one line says logging stops and nothing follows.
func TestFirstErrorsBounded(t *testing.T) {
	var buf testkit.Buffer
	f := newFirstErrors(slog.New(slog.NewTextHandler(&buf, nil)))
	for range 3 {
		f.note(messages.Login, "NO [AUTHENTICATIONFAILED]", "imap: NO [AUTHENTICATIONFAILED] bad")
		f.note(messages.Dial, "NO [AUTHENTICATIONFAILED]", "same kind, another phase")
	}
	for i := range maxLoggedKinds + 10 {
		f.note(messages.Fetch, fmt.Sprintf("kind %d", i), "x")
	}
	log := buf.String()
	if n := strings.Count(log, "AUTHENTICATIONFAILED]\""); n != 2 {
		t.Errorf("a kind noted 3 times in 2 phases was logged %d times, want 2 (once per phase):\n%s", n, log)
	}
	if n := strings.Count(log, "first error of its kind"); n != maxLoggedKinds {
		t.Errorf("%d first-error lines, want maxLoggedKinds = %d", n, maxLoggedKinds)
	}
	if n := strings.Count(log, "too many error kinds"); n != 1 {
		t.Errorf("%d lines saying logging stops, want 1", n)
	}
}
