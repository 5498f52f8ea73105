package producer_test

import (
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/producer"
)

// logLine is one JSON line of a producer's log.
type logLine struct {
	Level, Msg, Phase, Kind, Example string
}

// firstErrorLines parses log and returns its first-error lines.
func firstErrorLines(t *testing.T, log string) []logLine {
	t.Helper()
	var out []logLine
	for line := range strings.Lines(log) {
		var l logLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("producer log line %q: %v", line, err)
		}
		if strings.HasPrefix(l.Msg, "producer: first error") {
			out = append(out, l)
		}
	}
	return out
}

// TestFirstErrorLogged runs a step against a wrong password and against a
// closed port: each failure repeats at every reconnect, and the producer's
// log names it at Warn level exactly once, phase and kind, password-free.
func TestFirstErrorLogged(t *testing.T) {
	t.Parallel() // waits on NATS outages and timeouts, with servers of its own
	f := newFleet(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("net.Listen() error = %v", err)
	}
	closed := ln.Addr().String()
	ln.Close()
	tests := []struct {
		name, id, addr, password string
		phase, kind              string
	}{
		{"wrong password", "wrongpw", f.imap.Addr(), "wrong-pass-x", "login", "AUTHENTICATIONFAILED"},
		{"closed port", "closed", closed, f.imap.Password(), "dial", "connection refused"},
	}
	for i, tt := range tests {
		var buf testkit.Buffer
		o := f.options(tt.id, 4)
		o.Addr, o.Logger = tt.addr, slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
		if o.Accounts, err = producer.TemplateAccounts("user%d", f.users, tt.password); err != nil {
			t.Fatalf("TemplateAccounts() error = %v", err)
		}
		r := f.start(o)
		f.waitLive(1)
		f.runStep(tt.id, "errlog", i+1, `"rate":20,"warmup":"200ms","duration":"1s","stagger":"100ms"`)
		if err := r.stop(t); err != nil {
			t.Errorf("%s: Run() error = %v", tt.name, err)
		}
		checkFirstError(t, tt.name, buf.String(), tt.phase, tt.kind, tt.password)
	}
}

func checkFirstError(t *testing.T, name, log, phase, kind, password string) {
	t.Helper()
	if strings.Contains(log, password) {
		t.Errorf("%s: the producer log holds the password:\n%s", name, log)
	}
	n := 0
	for _, l := range firstErrorLines(t, log) {
		if l.Phase == phase && strings.Contains(l.Kind, kind) {
			n++
			if l.Level != "WARN" || l.Example == "" {
				t.Errorf("%s: log line %+v, want level WARN with an example", name, l)
			}
		}
	}
	if n != 1 {
		t.Errorf("%s: %d first-error lines of phase %s and a kind with %q, want 1; log:\n%s", name, n, phase, kind, log)
	}
}
