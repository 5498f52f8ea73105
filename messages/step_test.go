package messages_test

import (
	"encoding/json"
	"errors"
	"maps"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
)

// exampleStep is the command from the StepCommand documentation, as an
// operator types it.
const exampleStep = `{"run":"r1","step":1,"rate":1000,"duration":"30s"}`

func TestParseStepCommandDocumentedExample(t *testing.T) {
	c, err := messages.ParseStepCommand([]byte(exampleStep))
	if err != nil {
		t.Fatalf("ParseStepCommand(%s) error = %v", exampleStep, err)
	}
	if c.Run != "r1" || c.Step != 1 || c.Rate != 1000 || c.Duration.D() != 30*time.Second {
		t.Errorf("ParseStepCommand(%s) = %+v", exampleStep, c)
	}
	if c.Warmup != nil || c.Stagger != nil || c.Mix != nil || c.Arrival != "" {
		t.Errorf("ParseStepCommand(%s) set optional fields: %+v", exampleStep, c)
	}
	if got, want := c.StaggerOrDefault(), 2*time.Second; got != want {
		t.Errorf("StaggerOrDefault() = %v, want %v", got, want)
	}
	if got, want := c.WarmupOrDefault(), 3*time.Second; got != want {
		t.Errorf("WarmupOrDefault() = %v, want %v", got, want)
	}
	if got, want := c.ArrivalOrDefault(), messages.ArrivalConstant; got != want {
		t.Errorf("ArrivalOrDefault() = %q, want %q", got, want)
	}
	if got, want := c.MixOrDefault(), messages.DefaultMix(); !maps.Equal(got, want) {
		t.Errorf("MixOrDefault() = %v, want %v", got, want)
	}
	if got, want := c.ShareFor(4), 250.0; got != want {
		t.Errorf("ShareFor(4) = %v, want %v", got, want)
	}
}

// step returns the documented example with extra JSON fields spliced in.
func step(extra string) string {
	return strings.TrimSuffix(exampleStep, "}") + "," + extra + "}"
}

func TestParseStepCommand(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string // substring of the error; "" means valid
	}{
		{name: "documented example", in: exampleStep},
		{name: "example with trailing newline", in: exampleStep + "\n"},
		{name: "every option", in: step(`"warmup":"5s","stagger":"1s","producer_rate":50,"producers":3,"mix":{"fetch":1,"store":0},"arrival":"poisson"`)},
		{name: "run of 64 characters", in: `{"run":"` + strings.Repeat("r", 64) + `","step":1,"rate":1,"duration":"1s"}`},
		{name: "fractional rate", in: `{"run":"r1","step":1,"rate":0.5,"duration":"1m30s"}`},
		{name: "largest step, rate and duration", in: `{"run":"r1","step":1000000,"rate":1e7,"duration":"24h"}`},
		{name: "explicit zero warmup", in: step(`"warmup":"0s"`)},
		{name: "null mix means default", in: step(`"mix":null`)},
		{name: "client commands in the mix", in: step(`"mix":{"status":1,"search_date":1,"search_header":1,"body":1,"copy":1,"move":1,"expunge":1,"noop":1,"idle":1}`)},
		{name: "fetch target recent", in: step(`"fetch_target":"recent"`)},
		{name: "fetch target random", in: step(`"fetch_target":"random"`)},
		{name: "deliver rate", in: step(`"deliver_rate":12.5,"connections":10`)},
		{name: "negative deliver rate", in: step(`"deliver_rate":-1`), wantErr: "deliver_rate: -1 deliveries/s, want 0 (none)"},
		{name: "deliver rate above max", in: step(`"deliver_rate":2e7`), wantErr: "deliver_rate: 2e+07 deliveries/s"},
		{name: "deliver in the mix", in: step(`"mix":{"deliver":1,"fetch":1}`), wantErr: `"deliver" is not an IMAP command: deliveries have a rate of their own, deliver_rate`},
		{name: "inbox in the mix", in: step(`"mix":{"inbox":1,"fetch":1}`), wantErr: `"inbox" is not an IMAP command`},

		{name: "missing run", in: `{"step":1,"rate":1000,"duration":"30s"}`, wantErr: "run: missing"},
		{name: "run with a dot", in: `{"run":"r.1","step":1,"rate":1000,"duration":"30s"}`, wantErr: "run: messages: invalid name"},
		{name: "run with a space", in: `{"run":"r 1","step":1,"rate":1000,"duration":"30s"}`, wantErr: "run: messages: invalid name"},
		{name: "run wildcard", in: `{"run":">","step":1,"rate":1000,"duration":"30s"}`, wantErr: "run: messages: invalid name"},
		{name: "run of 65 characters", in: `{"run":"` + strings.Repeat("r", 65) + `","step":1,"rate":1,"duration":"1s"}`, wantErr: "65 characters"},
		{name: "step 0", in: `{"run":"r1","step":0,"rate":1000,"duration":"30s"}`, wantErr: "step: 0"},
		{name: "step missing", in: `{"run":"r1","rate":1000,"duration":"30s"}`, wantErr: "step: 0"},
		{name: "negative step", in: `{"run":"r1","step":-1,"rate":1000,"duration":"30s"}`, wantErr: "step: -1"},
		{name: "step above max", in: `{"run":"r1","step":1000001,"rate":1000,"duration":"30s"}`, wantErr: "step: 1000001"},
		{name: "rate 0", in: `{"run":"r1","step":1,"rate":0,"duration":"30s"}`, wantErr: "rate: 0"},
		{name: "rate missing", in: `{"run":"r1","step":1,"duration":"30s"}`, wantErr: "rate: 0"},
		{name: "negative rate", in: `{"run":"r1","step":1,"rate":-5,"duration":"30s"}`, wantErr: "rate: -5"},
		{name: "rate 1e8", in: `{"run":"r1","step":1,"rate":1e8,"duration":"30s"}`, wantErr: "rate: 1e+08"},
		{name: "rate as string", in: `{"run":"r1","step":1,"rate":"1000","duration":"30s"}`, wantErr: `rate: expected a number of commands per second, got a string ("1000")`},
		{name: "duration missing", in: `{"run":"r1","step":1,"rate":1000}`, wantErr: "duration: missing"},
		{name: "duration 0s", in: `{"run":"r1","step":1,"rate":1000,"duration":"0s"}`, wantErr: "duration: missing or zero"},
		{name: "negative duration", in: `{"run":"r1","step":1,"rate":1000,"duration":"-30s"}`, wantErr: "duration: -30s is negative"},
		{name: "duration 48h", in: `{"run":"r1","step":1,"rate":1000,"duration":"48h"}`, wantErr: "duration: 48h0m0s is longer than 24h0m0s"},
		{name: "bare number duration", in: `{"run":"r1","step":1,"rate":1000,"duration":30}`, wantErr: `duration: expected a duration such as "30s" or "1m30s" (a string: a bare number's unit would be a guess), got 30`},
		{name: "duration without unit", in: `{"run":"r1","step":1,"rate":1000,"duration":"30"}`, wantErr: `duration: expected a duration such as "30s" or "1m30s", got a string ("30")`},
		{name: "empty duration", in: `{"run":"r1","step":1,"rate":1000,"duration":""}`, wantErr: `duration: expected a duration such as "30s" or "1m30s", got a string ("")`},
		{name: "negative warmup", in: step(`"warmup":"-1s"`), wantErr: "warmup: -1s is negative"},
		{name: "warmup too long", in: step(`"warmup":"2h"`), wantErr: "warmup: 2h0m0s is longer than 1h0m0s"},
		{name: "stagger too long", in: step(`"stagger":"61m"`), wantErr: "stagger: 1h1m0s is longer than 1h0m0s"},
		{name: "negative stagger", in: step(`"stagger":"-1ms"`), wantErr: "stagger: -1ms is negative"},
		{name: "negative producer_rate", in: step(`"producer_rate":-1`), wantErr: "producer_rate: -1"},
		{name: "producer_rate above max", in: step(`"producer_rate":2e7`), wantErr: "producer_rate: 2e+07"},
		{name: "negative producers", in: step(`"producers":-2`), wantErr: "producers: -2"},
		{name: "too many producers", in: step(`"producers":100001`), wantErr: "producers: 100001"},
		{name: "unknown field", in: step(`"rat":5`), wantErr: `unknown field "rat"`},
		{name: "misspelt duration", in: `{"run":"r1","step":1,"rate":1000,"duraton":"30s"}`, wantErr: `unknown field "duraton"`},
		{name: "malformed JSON", in: `{"run":"r1",`, wantErr: "malformed JSON"},
		{name: "not an object", in: `[1,2]`, wantErr: "malformed JSON"},
		{name: "empty input", in: ``, wantErr: "malformed JSON"},
		{name: "trailing garbage", in: exampleStep + ` x`, wantErr: "trailing data"},
		{name: "two objects", in: exampleStep + exampleStep, wantErr: "trailing data"},
		{name: "trailing brace", in: exampleStep + `}`, wantErr: "trailing data"},
		{name: "trailing bracket", in: exampleStep + `]`, wantErr: "trailing data"},
		{name: "oversized input", in: exampleStep + strings.Repeat(" ", messages.MaxStepJSONBytes), wantErr: "at most 65536"},
		{name: "mix key dial", in: step(`"mix":{"dial":1,"fetch":1}`), wantErr: `"dial" is session set-up`},
		{name: "mix key login", in: step(`"mix":{"login":1,"fetch":1}`), wantErr: `"login" is session set-up`},
		{name: "mix key nope", in: step(`"mix":{"nope":1,"fetch":1}`), wantErr: `messages: unknown phase: "nope"`},
		{name: "negative mix weight", in: step(`"mix":{"fetch":-1,"list":2}`), wantErr: `"fetch" weight -1`},
		{name: "all-zero mix", in: step(`"mix":{"fetch":0,"list":0}`), wantErr: "no positive weight"},
		{name: "empty mix", in: step(`"mix":{}`), wantErr: "no positive weight"},
		{name: "bad arrival", in: step(`"arrival":"burst"`), wantErr: `arrival: "burst"`},
		{name: "unknown fetch target", in: step(`"fetch_target":"oldest"`), wantErr: `fetch_target: "oldest", want "random" or "recent"`},
		{name: "fetch target in capitals", in: step(`"fetch_target":"Recent"`), wantErr: `fetch_target: "Recent"`},
		{name: "arrival in capitals", in: step(`"arrival":"Poisson"`), wantErr: `arrival: "Poisson"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := messages.ParseStepCommand([]byte(tt.in))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseStepCommand(%.80s) error = %v, want nil", tt.in, err)
				}
				if err := c.Validate(); err != nil {
					t.Errorf("Validate() of a parsed command = %v", err)
				}
				return
			}
			if !errors.Is(err, messages.ErrInvalidStep) {
				t.Fatalf("ParseStepCommand(%.80s) error = %v, want errors.Is ErrInvalidStep", tt.in, err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseStepCommand(%.80s) error = %q, want it to mention %q", tt.in, err, tt.wantErr)
			}
		})
	}
}

func TestParseStepCommandReportsEveryProblem(t *testing.T) {
	in := `{"run":"a b","step":0,"rate":-1,"duration":"48h","warmup":"-1s","stagger":"2h",` +
		`"producer_rate":-1,"producers":-1,"mix":{"dial":1,"nope":1,"fetch":-1},"arrival":"burst","fetch_target":"oldest"}`
	_, err := messages.ParseStepCommand([]byte(in))
	if !errors.Is(err, messages.ErrInvalidStep) {
		t.Fatalf("ParseStepCommand() error = %v, want errors.Is ErrInvalidStep", err)
	}
	for _, want := range []string{
		"run: messages: invalid name", "step: 0", "rate: -1", "duration: 48h0m0s is longer",
		"warmup: -1s is negative", "stagger: 2h0m0s is longer", "producer_rate: -1", "producers: -1",
		`"dial" is session set-up`, `unknown phase: "nope"`, `"fetch" weight -1`, `arrival: "burst"`,
		`fetch_target: "oldest"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("ParseStepCommand() error does not mention %q:\n%v", want, err)
		}
	}
	if got := strings.Count(err.Error(), "\n") + 1; got < 10 {
		t.Errorf("ParseStepCommand() error has %d lines, want one per problem:\n%v", got, err)
	}
}

// TestStepCommandValidate covers values that JSON cannot carry.
func TestStepCommandValidate(t *testing.T) {
	valid := func() messages.StepCommand {
		return messages.StepCommand{Run: "r1", Step: 1, Rate: 10, Duration: messages.Duration(time.Second)}
	}
	tests := []struct {
		name    string
		mutate  func(*messages.StepCommand)
		wantErr string
	}{
		{name: "valid", mutate: func(*messages.StepCommand) {}},
		{name: "NaN rate", mutate: func(c *messages.StepCommand) { c.Rate = math.NaN() }, wantErr: "rate: NaN"},
		{name: "infinite rate", mutate: func(c *messages.StepCommand) { c.Rate = math.Inf(1) }, wantErr: "rate: +Inf"},
		{name: "NaN producer rate", mutate: func(c *messages.StepCommand) { c.ProducerRate = math.NaN() }, wantErr: "producer_rate: NaN"},
		{name: "NaN mix weight", mutate: func(c *messages.StepCommand) { c.Mix = map[string]float64{"fetch": math.NaN()} }, wantErr: `"fetch" weight NaN`},
		{name: "infinite mix weight", mutate: func(c *messages.StepCommand) { c.Mix = map[string]float64{"fetch": math.Inf(1)} }, wantErr: `"fetch" weight +Inf`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid()
			tt.mutate(&c)
			err := c.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, messages.ErrInvalidStep) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Validate() = %v, want ErrInvalidStep mentioning %q", err, tt.wantErr)
			}
		})
	}
}

func TestValidateMix(t *testing.T) {
	tests := []struct {
		name    string
		mix     map[string]float64
		wantErr string
	}{
		{name: "default mix", mix: messages.DefaultMix()},
		{name: "one command", mix: map[string]float64{"append": 1}},
		{name: "zero weight beside a positive one", mix: map[string]float64{"logout": 0, "list": 0.1}},
		{name: "dial", mix: map[string]float64{"dial": 1}, wantErr: `"dial" is session set-up`},
		{name: "login", mix: map[string]float64{"login": 1}, wantErr: `"login" is session set-up`},
		{name: "unknown name", mix: map[string]float64{"nope": 1}, wantErr: "unknown phase"},
		{name: "upper case name", mix: map[string]float64{"FETCH": 1}, wantErr: "unknown phase"},
		{name: "negative", mix: map[string]float64{"fetch": -0.5}, wantErr: "weight -0.5"},
		{name: "NaN", mix: map[string]float64{"fetch": math.NaN()}, wantErr: "weight NaN"},
		{name: "infinite", mix: map[string]float64{"store": math.Inf(1)}, wantErr: "weight +Inf"},
		{name: "all zero", mix: map[string]float64{"fetch": 0, "store": 0}, wantErr: "no positive weight"},
		{name: "empty", mix: map[string]float64{}, wantErr: "no positive weight"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := messages.ValidateMix(tt.mix)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("ValidateMix(%v) = %v, want nil", tt.mix, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("ValidateMix(%v) = %v, want an error mentioning %q", tt.mix, err, tt.wantErr)
			}
		})
	}
}

func TestShareFor(t *testing.T) {
	tests := []struct {
		name         string
		rate         float64
		producerRate float64
		producers    int
		live         int
		want         float64
	}{
		{name: "split over live producers", rate: 1000, live: 4, want: 250},
		{name: "one live producer", rate: 1000, live: 1, want: 1000},
		{name: "no live producer counts as one", rate: 1000, live: 0, want: 1000},
		{name: "negative live counts as one", rate: 1000, live: -3, want: 1000},
		{name: "uneven split", rate: 1000, live: 3, want: 1000.0 / 3},
		{name: "producers overrides live", rate: 1000, producers: 8, live: 2, want: 125},
		{name: "producers with no live", rate: 1000, producers: 5, want: 200},
		{name: "producer rate overrides both", rate: 1000, producerRate: 70, producers: 8, live: 2, want: 70},
		{name: "producer rate alone", producerRate: 70, live: 9, want: 70},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := messages.StepCommand{Rate: tt.rate, ProducerRate: tt.producerRate, Producers: tt.producers}
			if got := c.ShareFor(tt.live); got != tt.want {
				t.Errorf("ShareFor(%d) = %v, want %v", tt.live, got, tt.want)
			}
		})
	}
}

func TestDeliverShareFor(t *testing.T) {
	tests := []struct {
		name      string
		cmd       messages.StepCommand
		live      int
		want      float64
		wantShare float64 // ShareFor, untouched by the deliver rate
	}{
		{name: "split over live producers", cmd: messages.StepCommand{Rate: 100, DeliverRate: 40}, live: 4, want: 10, wantShare: 25},
		{name: "no live producer counts as one", cmd: messages.StepCommand{Rate: 100, DeliverRate: 40}, want: 40, wantShare: 100},
		{name: "producers overrides live", cmd: messages.StepCommand{Rate: 100, DeliverRate: 40, Producers: 8}, live: 2, want: 5, wantShare: 12.5},
		{name: "producer rate leaves deliveries shared", cmd: messages.StepCommand{Rate: 100, ProducerRate: 70, DeliverRate: 40}, live: 2, want: 20, wantShare: 70},
		{name: "no deliveries", cmd: messages.StepCommand{Rate: 100}, live: 2, want: 0, wantShare: 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.cmd.DeliverShareFor(tt.live); got != tt.want {
				t.Errorf("DeliverShareFor(%d) = %v, want %v", tt.live, got, tt.want)
			}
			if got := tt.cmd.ShareFor(tt.live); got != tt.wantShare {
				t.Errorf("ShareFor(%d) = %v, want %v", tt.live, got, tt.wantShare)
			}
		})
	}
}

func TestStepDefaults(t *testing.T) {
	d := func(v time.Duration) *messages.Duration { x := messages.Duration(v); return &x }
	tests := []struct {
		name        string
		duration    time.Duration
		warmup      *messages.Duration
		stagger     *messages.Duration
		wantStagger time.Duration
		wantWarmup  time.Duration
	}{
		{name: "long step", duration: time.Minute, wantStagger: 2 * time.Second, wantWarmup: 3 * time.Second},
		{name: "short step: quarter and half", duration: 4 * time.Second, wantStagger: time.Second, wantWarmup: 2 * time.Second},
		{name: "explicit stagger", duration: time.Minute, stagger: d(10 * time.Second), wantStagger: 10 * time.Second, wantWarmup: 11 * time.Second},
		{name: "explicit stagger capped warmup", duration: 10 * time.Second, stagger: d(20 * time.Second), wantStagger: 20 * time.Second, wantWarmup: 5 * time.Second},
		{name: "explicit warmup", duration: time.Minute, warmup: d(0), wantStagger: 2 * time.Second, wantWarmup: 0},
		{name: "explicit zero stagger", duration: time.Minute, stagger: d(0), wantStagger: 0, wantWarmup: time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := messages.StepCommand{Duration: messages.Duration(tt.duration), Warmup: tt.warmup, Stagger: tt.stagger}
			if got := c.StaggerOrDefault(); got != tt.wantStagger {
				t.Errorf("StaggerOrDefault() = %v, want %v", got, tt.wantStagger)
			}
			if got := c.WarmupOrDefault(); got != tt.wantWarmup {
				t.Errorf("WarmupOrDefault() = %v, want %v", got, tt.wantWarmup)
			}
		})
	}
}

func TestOrDefaultKeepsExplicitValues(t *testing.T) {
	c := messages.StepCommand{Arrival: messages.ArrivalPoisson, Mix: map[string]float64{"fetch": 1}}
	if got := c.ArrivalOrDefault(); got != messages.ArrivalPoisson {
		t.Errorf("ArrivalOrDefault() = %q, want %q", got, messages.ArrivalPoisson)
	}
	if got := c.MixOrDefault(); !maps.Equal(got, c.Mix) {
		t.Errorf("MixOrDefault() = %v, want %v", got, c.Mix)
	}
	// DefaultMix hands out a fresh map: a caller that edits it changes no one else's.
	m := messages.DefaultMix()
	m["fetch"] = 0
	if messages.DefaultMix()["fetch"] == 0 {
		t.Error("DefaultMix() returned a shared map")
	}
}

func TestStepCommandJSONRoundTrip(t *testing.T) {
	in := step(`"warmup":"1m30s","stagger":"250ms","producer_rate":12.5,"producers":3,"mix":{"fetch":2,"list":1},"arrival":"poisson"`)
	c, err := messages.ParseStepCommand([]byte(in))
	if err != nil {
		t.Fatalf("ParseStepCommand() error = %v", err)
	}
	out, err := json.Marshal(c)
	if err != nil {
		t.Fatalf("json.Marshal(%+v) error = %v", c, err)
	}
	if !strings.Contains(string(out), `"warmup":"1m30s"`) || !strings.Contains(string(out), `"duration":"30s"`) {
		t.Errorf("json.Marshal() = %s, want durations as strings", out)
	}
	back, err := messages.ParseStepCommand(out)
	if err != nil {
		t.Fatalf("ParseStepCommand(%s) error = %v", out, err)
	}
	if back.Warmup.D() != 90*time.Second || back.Stagger.D() != 250*time.Millisecond ||
		!maps.Equal(back.Mix, c.Mix) || back.Arrival != c.Arrival || back.ProducerRate != c.ProducerRate {
		t.Errorf("round trip = %+v, want %+v", back, c)
	}
}

func TestDurationJSON(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    time.Duration
		wantErr string
	}{
		{name: "seconds", in: `"30s"`, want: 30 * time.Second},
		{name: "compound", in: `"1h2m3.5s"`, want: time.Hour + 2*time.Minute + 3500*time.Millisecond},
		{name: "milliseconds", in: `"250ms"`, want: 250 * time.Millisecond},
		{name: "bare number", in: `30`, wantErr: `expected a duration such as "30s" or "1m30s" (a string: a bare number's unit would be a guess), got 30`},
		{name: "null", in: `null`, wantErr: `expected a duration such as "30s" or "1m30s", got null`},
		{name: "no unit", in: `"30"`, wantErr: `got a string ("30")`},
		{name: "words", in: `"thirty seconds"`, wantErr: `got a string ("thirty seconds")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d messages.Duration
			err := json.Unmarshal([]byte(tt.in), &d)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("Unmarshal(%s) error = %v, want one mentioning %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || d.D() != tt.want {
				t.Fatalf("Unmarshal(%s) = %v, %v; want %v", tt.in, d, err, tt.want)
			}
			out, err := json.Marshal(d)
			if err != nil || string(out) != `"`+tt.want.String()+`"` {
				t.Errorf("Marshal(%v) = %s, %v; want %q", d, out, err, tt.want.String())
			}
		})
	}
}
