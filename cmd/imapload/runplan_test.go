package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/ramp"
	"github.com/imapload/imapload/verdict"
)

// TestRunPlanText: the plan names the target, the rates in order, the most
// it offers, how far past the knee it goes, the step length and the longest
// the run can take.
func TestRunPlanText(t *testing.T) {
	tmpl := messages.StepCommand{Duration: messages.Duration(10 * time.Second)}
	tests := []struct {
		name string
		plan ramp.Plan
		want []string
	}{
		{"doubling to a maximum", ramp.Plan{Start: 100, Factor: 2, Max: 800, AfterKnee: 1},
			[]string{"rates      100, 200, 400, 800 commands/s, in this order", "at most    800 commands/s", "stops 1 step past the knee",
				"each step  warm-up 3s + window 10s", "longest    4 steps × 13s = 52s", "--result-wait 1m0s"}},
		{"explicit rates, refined", ramp.Plan{Rates: []float64{50, 75.5}, Refine: 3, AfterKnee: 0},
			[]string{"rates      50, 75.5 commands/s", "at most    75.5 commands/s", "stops 0 steps past the knee",
				"then re-offers the last held rate and bisects 3 steps", "longest    6 steps × 13s = 1m18s"}},
		{"most steps", ramp.Plan{Start: 10, MaxSteps: 3},
			[]string{"rates      10, 20, 40 commands/s", "longest    3 steps × 13s = 39s"}},
		{"connection ramp", ramp.Plan{Connections: []int{100, 200}, Rate: 50},
			[]string{"steps      100, 200 held IDLE connections, at a fixed 50 commands/s", "at most    50 commands/s with 200 connections", "longest    2 steps"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			runPlan{Run: "r1", Target: "mail:993", TLS: "implicit TLS (--tls)", Auth: "login", Accounts: "10 from a.txt",
				Producers: "2 producers in this process", Ramp: tt.plan, Template: tmpl, ResultWait: time.Minute}.write(&b)
			for _, w := range append(tt.want, "plan of run r1:", "target     mail:993, implicit TLS (--tls), log in by LOGIN", "accounts   10 from a.txt") {
				if !strings.Contains(b.String(), w) {
					t.Errorf("plan lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
}

// TestRunRefusesImpossiblePlans: a run that cannot be right is refused with
// exit 2 before anything is connected or started (no NATS store appears,
// and the IMAP address is one where nothing listens).
func TestRunRefusesImpossiblePlans(t *testing.T) {
	base := []string{"run", "--imap", "127.0.0.1:1", "--accounts-count", "2", "--out", ""}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"nobody offers load", []string{"--producers", "0"}, "--producers 0: nobody would offer load"},
		{"others expected where none can join", []string{"--expect-producers", "2"}, "cannot join without --listen"},
		{"listen and another NATS", []string{"--listen", "127.0.0.1:0", "--nats", unreachableNATS}, "--listen and --nats"},
		{"store and another NATS", []string{"--store", "x", "--nats", unreachableNATS}, "--store and --nats"},
		{"NATS credentials for the embedded server", []string{"--nats-creds", "x.creds"}, "only with --nats"},
		{"no target", []string{"--imap", ""}, "--imap is required"},
		{"both TLS modes", []string{"--tls", "--starttls"}, "--tls and --starttls"},
		{"maximum under the start", []string{"--start", "100", "--max", "50"}, "max 50: want 0 (none) or ≥ start 100"},
		{"bad rates", []string{"--rates", "10,x"}, `--rates: "x" is not a rate`},
		{"bad terminal", []string{"--terminal", "maybe"}, "--terminal \"maybe\""},
		{"run id", []string{"--run", "a.b"}, "run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			out, _, err := runCLI(ctx, append(base, tt.args...)...)
			if code := exitCode(err); code != verdict.ExitUsage || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("imapload run %s = exit %d, %v; want exit %d, an error containing %q", strings.Join(tt.args, " "), code, err, verdict.ExitUsage, tt.want)
			}
			if strings.Contains(out, "NATS") || strings.Contains(out, "step 1") {
				t.Errorf("a refused run started something:\n%s", out)
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "imapload-*")); len(left) > 0 {
				t.Errorf("a refused run made %v", left)
			}
		})
	}
}
