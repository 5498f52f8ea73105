package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/nats-io/nats.go"
)

// unreachableNATS is a URL nothing listens on: a command that validates its
// input first fails on the input, never on the connection.
const unreachableNATS = "nats://127.0.0.1:1"

// TestStepInvalid: every bad step command fails with a clear error before
// connecting to NATS, and publishes nothing.
func TestStepInvalid(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    string
		invalid bool // the error wraps messages.ErrInvalidStep
	}{
		{name: "no rate", args: []string{"--run", "r1"}, want: "rate: 0 commands/s", invalid: true},
		{name: "no run", args: []string{"--rate", "10"}, want: "run: missing", invalid: true},
		{name: "run not a token", args: []string{"--run", "r.1", "--rate", "10"}, want: "run:", invalid: true},
		{name: "absurd rate", args: []string{"--run", "r1", "--rate", "1e8"}, want: "rate:", invalid: true},
		{name: "step zero", args: []string{"--run", "r1", "--rate", "10", "--step", "0"}, want: "step: 0", invalid: true},
		{name: "zero duration", args: []string{"--run", "r1", "--rate", "10", "--duration", "0s"}, want: "duration: missing or zero", invalid: true},
		{name: "huge duration", args: []string{"--run", "r1", "--rate", "10", "--duration", "25h"}, want: "longer than", invalid: true},
		{name: "bad arrival", args: []string{"--run", "r1", "--rate", "10", "--arrival", "burst"}, want: "arrival:", invalid: true},
		{name: "bad fetch target", args: []string{"--run", "r1", "--rate", "10", "--fetch-target", "oldest"}, want: "fetch_target:", invalid: true},
		{name: "every problem at once", args: []string{"--run", "", "--rate", "-1", "--step", "0"}, want: "run: missing\nstep: 0", invalid: true},
		{name: "mix without weight", args: []string{"--run", "r1", "--rate", "10", "--mix", "fetch"}, want: "want name=weight"},
		{name: "mix unknown phase", args: []string{"--run", "r1", "--rate", "10", "--mix", "bogus=1"}, want: "bogus"},
		{name: "mix set-up phase", args: []string{"--run", "r1", "--rate", "10", "--mix", "login=1"}, want: "session set-up"},
		{name: "json malformed", args: []string{"--json", `{"run":`}, want: "malformed JSON", invalid: true},
		{name: "json unknown field", args: []string{"--json", `{"run":"r1","step":1,"rate":5,"duration":"1s","rat":5}`}, want: `"rat"`, invalid: true},
		{name: "json trailing data", args: []string{"--json", `{"run":"r1","step":1,"rate":5,"duration":"1s"} x`}, want: "trailing data", invalid: true},
		{name: "json bad values", args: []string{"--json", `{"run":"r1","step":1,"rate":-5,"duration":"-1s"}`}, want: "duration: -1s is negative", invalid: true},
		{name: "bad duration flag", args: []string{"--run", "r1", "--rate", "10", "--duration", "soon"}, want: `invalid argument "soon"`},
		{name: "stray argument", args: []string{"--run", "r1", "--rate", "10", "now"}, want: `unknown command "now"`},
		{name: "bad env value", env: map[string]string{"IMAPLOAD_RATE": "fast"}, args: []string{"--run", "r1"}, want: `IMAPLOAD_RATE="fast"`},
		{name: "invalid env rate", env: map[string]string{"IMAPLOAD_RATE": "-3"}, args: []string{"--run", "r1"}, want: "rate: -3", invalid: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			args := append([]string{"step", "--nats", unreachableNATS}, tt.args...)
			out, _, err := runCLI(ctx, args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("imapload %s = %v, want an error containing %q", strings.Join(args, " "), err, tt.want)
			}
			if strings.Contains(err.Error(), "connect") || strings.Contains(out, "published") {
				t.Errorf("imapload step reached NATS (%v, printed %q), want a failure before connecting", err, out)
			}
			if got := errors.Is(err, messages.ErrInvalidStep); got != tt.invalid {
				t.Errorf("errors.Is(%v, ErrInvalidStep) = %v, want %v", err, got, tt.invalid)
			}
		})
	}
}

// TestStepPublishes: the command a subscriber receives is exactly what the
// flags (and IMAPLOAD_* variables, which given flags override) say, and
// --json is sent as typed.
func TestStepPublishes(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want messages.StepCommand
	}{
		{
			name: "flags",
			args: []string{"--run", "r1", "--step", "3", "--rate", "1000", "--duration", "30s", "--mix", "fetch=130, select=100, idle=5",
				"--arrival", "poisson", "--fetch-target", "recent"},
			want: messages.StepCommand{Run: "r1", Step: 3, Rate: 1000, Duration: messages.Duration(30 * time.Second),
				Mix: map[string]float64{"fetch": 130, "select": 100, "idle": 5}, Arrival: "poisson", FetchTarget: "recent"},
		},
		{
			name: "environment",
			env:  map[string]string{"IMAPLOAD_RUN": "envrun", "IMAPLOAD_RATE": "250", "IMAPLOAD_PRODUCER_RATE": "50", "IMAPLOAD_DURATION": "5s"},
			want: messages.StepCommand{Run: "envrun", Step: 1, Rate: 250, ProducerRate: 50, Duration: messages.Duration(5 * time.Second)},
		},
		{
			name: "flags win over environment",
			env:  map[string]string{"IMAPLOAD_RUN": "envrun", "IMAPLOAD_RATE": "250"},
			args: []string{"--rate", "300", "--warmup", "0s", "--stagger", "1s"},
			want: messages.StepCommand{Run: "envrun", Step: 1, Rate: 300, Duration: messages.Duration(30 * time.Second),
				Warmup: durationPtr(0), Stagger: durationPtr(time.Second)},
		},
		{
			name: "a profile offered in sessions per second",
			args: []string{"--run", "r2", "--profile", "mobile", "--session-rate", "30", "--duration", "10s"},
			want: messages.StepCommand{Run: "r2", Step: 1, Rate: 120, SessionRate: 30, Profile: "mobile",
				Script: "login select fetch fetch logout", FetchTarget: "recent", Duration: messages.Duration(10 * time.Second)},
		},
		{
			name: "json",
			args: []string{"--json", `{"run":"r1","step":1,"rate":1000,"duration":"30s"}`},
			want: messages.StepCommand{Run: "r1", Step: 1, Rate: 1000, Duration: messages.Duration(30 * time.Second)},
		},
	}
	url, sub := stepListener(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			t.Setenv("IMAPLOAD_NATS", url)
			got := publishStep(t, sub, append([]string{"step", "--wait", "0"}, tt.args...))
			if !sameStep(got, tt.want) {
				t.Errorf("published step = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestStepResultInSessions: `imapload step --result` runs its step through
// the ramp's controller, whose rate is in commands/s; a step offered in
// sessions per second (from a profile's script) is published as asked, not
// refused as giving both rates.
func TestStepResultInSessions(t *testing.T) {
	url, sub := stepListener(t)
	t.Setenv("IMAPLOAD_NATS", url)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, errOut, err := runCLI(ctx, "step", "--run", "rs", "--profile", "mobile", "--session-rate", "30",
		"--duration", "1s", "--warmup", "0s", "--stagger", "0s", "--wait", "0", "--result", "--result-wait", "1s")
	if err == nil || strings.Contains(errOut+err.Error(), "bad options") {
		t.Errorf("imapload step --result with no fleet: error %v, stderr %q; want no result, not bad options", err, errOut)
	}
	m, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatalf("no step command received: %v", err)
	}
	c, err := messages.ParseStepCommand(m.Data)
	if err != nil || c.SessionRate != 30 || c.Rate != 120 {
		t.Errorf("published %s (%v); want 30 sessions/s, 120 commands/s", m.Data, err)
	}
}

// stepListener starts a NATS server and subscribes to the step subject on
// it, as a producer would; it returns the server's URL.
func stepListener(t *testing.T) (string, *nats.Subscription) {
	t.Helper()
	ns := startNATS(t, nil)
	nc := connect(t, ns.ClientURL())
	sub, err := nc.SubscribeSync(messages.StepSubject)
	if err != nil {
		t.Fatalf("SubscribeSync: %v", err)
	}
	nc.Flush()
	return ns.ClientURL(), sub
}

// publishStep runs `imapload step` and returns the command sub receives.
func publishStep(t *testing.T, sub *nats.Subscription, args []string) messages.StepCommand {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, _, err := runCLI(ctx, args...)
	if err != nil {
		t.Fatalf("imapload %s = %v", strings.Join(args, " "), err)
	}
	if !strings.Contains(out, "published "+messages.StepSubject) {
		t.Errorf("imapload step printed %q, want the published command", out)
	}
	m, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatalf("no step command received: %v", err)
	}
	c, err := messages.ParseStepCommand(m.Data)
	if err != nil {
		t.Fatalf("ParseStepCommand(%s) = %v", m.Data, err)
	}
	return c
}

func durationPtr(d time.Duration) *messages.Duration {
	md := messages.Duration(d)
	return &md
}

// sameStep compares through JSON, the form on the wire.
func sameStep(a, b messages.StepCommand) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// TestStepReplies: `imapload step` lists each producer's answer and fails
// only when every producer that answered refused the step.
func TestStepReplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		replies []messages.StepReply
		want    []string
		wantErr string
	}{
		{name: "nobody listens", want: []string{"0 producer(s) accepted, 0 answered"}},
		{
			name: "one accepts, one refuses",
			replies: []messages.StepReply{
				{Producer: "p1", Run: "r1", Step: 1, Accepted: true, Rate: 50, Producers: 2},
				{Producer: "p2", Error: "producer: busy"},
			},
			want: []string{"p1", "accepted: 50.0 commands/s (1/2 of the fleet rate)", "p2", "REJECTED: producer: busy", "1 producer(s) accepted, 2 answered"},
		},
		{
			name:    "every producer refuses",
			replies: []messages.StepReply{{Producer: "p1", Error: "no"}, {Producer: "p2", Error: "no"}},
			want:    []string{"0 producer(s) accepted, 2 answered"},
			wantErr: "every producer rejected the step",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := startNATS(t, nil)
			nc := connect(t, ns.ClientURL())
			for _, r := range tt.replies {
				answer(t, nc, r)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			out, _, err := runCLI(ctx, "step", "--nats", ns.ClientURL(), "--run", "r1", "--rate", "100", "--wait", "500ms")
			if tt.wantErr == "" && err != nil {
				t.Errorf("imapload step = %v, want nil", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("imapload step = %v, want an error containing %q", err, tt.wantErr)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("imapload step printed:\n%s\nwant it to contain %q", out, w)
				}
			}
		})
	}
}

// answer subscribes a stand-in producer that answers every step command with r.
func answer(t *testing.T, nc *nats.Conn, r messages.StepReply) {
	t.Helper()
	b, _ := json.Marshal(r)
	sub, err := nc.Subscribe(messages.StepSubject, func(m *nats.Msg) { _ = m.Respond(b) })
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}
