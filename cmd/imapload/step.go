package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/progress"
	"github.com/imapload/imapload/ramp"
	"github.com/imapload/imapload/reporter"
	"github.com/imapload/imapload/verdict"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func stepCmd(g *globalFlags) *cobra.Command {
	c := &stepConfig{}
	return bind(&cobra.Command{
		Use:   "step",
		Short: "Publish one step command to the fleet and list the producers' answers",
		Long: `Publishes a step command on imapload.step, the same JSON an operator sends with
  nats pub imapload.step '{"run":"r1","step":1,"rate":1000,"duration":"30s"}'
and prints each producer's accept/reject answer that arrives within --wait.
With --result it also waits for the step's result from the aggregator, prints its
verdict, and exits as ramp does (0 held or below, 3 failing, 4 inconclusive).`,
		Example: `  imapload step --run r1 --step 1 --rate 1000 --duration 30s
  imapload step --json '{"run":"r1","step":2,"rate":2000,"duration":"30s"}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runStep(cmd, c, g.logger(cmd)) },
	}, c)
}

// stepConfig is the configuration of `imapload step`.
type stepConfig struct {
	JSON       string        // --json: the step command as JSON, instead of Step
	Wait       time.Duration // --wait: how long to collect producers' answers, 0 to publish only
	Result     bool          // --result: wait for the step's result, exit with its verdict
	ResultWait time.Duration // --result-wait past the step's end for its result
	Threshold  float64       // --threshold: delivered/target ratio under which the step is below
	NATS       natsConfig
	Step       stepFlags
}

func (c *stepConfig) add(fs *pflag.FlagSet) {
	c.NATS.add(fs)
	c.Step.add(fs)
	fs.StringVar(&c.JSON, "json", "", "the step command as JSON (instead of the flags)")
	fs.DurationVar(&c.Wait, "wait", time.Second, "how long to collect producers' answers (0: publish only)")
	fs.BoolVar(&c.Result, "result", false, "wait for the step's result and exit with its verdict")
	fs.DurationVar(&c.ResultWait, "result-wait", time.Minute, "with --result, how long past the step's end to wait for it")
	fs.Float64Var(&c.Threshold, "threshold", reporter.DefaultThreshold, "with --result, delivered/target ratio under which the step is below")
}

func (c *stepConfig) validate() error {
	return flagErrors(c.NATS.checks(), c.Step.checks(), []error{
		checkDuration("wait", c.Wait),
		checkDuration("result-wait", c.ResultWait),
		checkFloat("threshold", c.Threshold, thresholdRule()),
	})
}

// stepFlags are the fields of a step command.
type stepFlags struct {
	Run          string        // --run id
	Step         int           // --step number, from 1
	Rate         float64       // --rate: fleet-wide offered rate, commands/s
	Duration     time.Duration // --duration: measurement window
	SessionRate  float64       // --session-rate: fleet-wide offered sessions/s (with --script)
	ProducerRate float64       // --producer-rate: per-producer override, commands/s
	Producers    int           // --producers to divide the rate by, 0 for the live count
	Connections  int           // --connections: fleet-wide held IDLE connections, 0 for none
	Shape        shapeFlags
}

func (s *stepFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&s.Run, "run", "", "run id (letters, digits, '-', '_')")
	fs.IntVar(&s.Step, "step", 1, "step number, from 1")
	fs.Float64Var(&s.Rate, "rate", 0, "fleet-wide offered rate, IMAP commands per second")
	fs.Float64Var(&s.SessionRate, "session-rate", 0, "fleet-wide offered rate in sessions (logins) per second, instead of --rate; needs --script, or a --profile with one")
	fs.DurationVar(&s.Duration, "duration", 30*time.Second, "measurement window of the step")
	fs.Float64Var(&s.ProducerRate, "producer-rate", 0, "per-producer rate override, commands/s")
	fs.IntVar(&s.Producers, "producers", 0, "divide the rate by this many producers instead of the live count")
	fs.IntVar(&s.Connections, "connections", 0, "logged-in IDLE connections to hold beside the rate, fleet-wide (divided as the rate is)")
	s.Shape.add(fs)
}

// checks returns the errors of the flags' values, nil for a good one; the
// step command's own validation checks the rest.
func (s *stepFlags) checks() []error {
	return []error{checkDuration("duration", s.Duration), checkInt("producers", s.Producers, atLeast(0))}
}

// command builds and validates the step command of the flags.
func (s *stepFlags) command() (messages.StepCommand, error) {
	c := messages.StepCommand{Run: s.Run, Step: s.Step, Rate: s.Rate, SessionRate: s.SessionRate,
		ProducerRate: s.ProducerRate, Producers: s.Producers, Connections: s.Connections, Duration: messages.Duration(s.Duration)}
	if err := s.Shape.apply(&c); err != nil {
		return c, err
	}
	return c.Normalized(), c.Validate()
}

// shapeFlags shape every step: warm-up, stagger, mix, arrival and fetch
// target (used by step, ramp and demo).
type shapeFlags struct {
	Warmup  time.Duration // --warmup before each window; negative: the contract's default
	Stagger time.Duration // --stagger of session starts; negative: the contract's default
	Mix     string        // --mix: workload weights, "" for the producers' default
	Arrival string        // --arrival: constant or poisson, "" for constant
	Script  string        // --script: a fixed session shape instead of a mix, "" for none
	Profile string        // --profile: a named client workload, "" for none
	Target  string        // --fetch-target: random or recent, "" for random
	// DeliverRate is --deliver-rate, deliveries/s fleet-wide; -1 when not
	// given (none, or in run and demo the profile's).
	DeliverRate float64
}

func (s *shapeFlags) add(fs *pflag.FlagSet) {
	derivedDurationVar(fs, &s.Warmup, "warmup", "warm-up before each measurement window (default: stagger + 1s, at most half the duration)")
	derivedDurationVar(fs, &s.Stagger, "stagger", "window over which session starts are spread (default: min(2s, duration/4))")
	fs.StringVar(&s.Mix, "mix", "", "workload weights, e.g. fetch=130,select=100,list=50,store=50,append=10,logout=20")
	fs.StringVar(&s.Arrival, "arrival", "", "constant (default) or poisson")
	fs.StringVar(&s.Profile, "profile", "", "a named client workload: imaptest, desktop, mobile or webmail (docs/guide.md: Profiles); --mix, --script and --fetch-target override its parts")
	fs.StringVar(&s.Script, "script", "", `a fixed session shape instead of a mix, e.g. "login select fetch logout": each offered session runs it once`)
	fs.StringVar(&s.Target, "fetch-target", "", "messages fetch and body read: random (default) or recent")
	deliverRateVar(fs, &s.DeliverRate)
}

// apply sets c's warm-up, stagger, mix, arrival and fetch target; a negative duration
// leaves the contract's default.
func (s *shapeFlags) apply(c *messages.StepCommand) error {
	c.Arrival, c.Script, c.FetchTarget, c.Profile = s.Arrival, s.Script, s.Target, s.Profile
	if s.DeliverRate != -1 { // any other negative rate is refused by Validate
		c.DeliverRate = s.DeliverRate
	}
	for _, d := range []struct {
		v   time.Duration
		dst **messages.Duration
	}{{s.Warmup, &c.Warmup}, {s.Stagger, &c.Stagger}} {
		if d.v >= 0 {
			md := messages.Duration(d.v)
			*d.dst = &md
		}
	}
	mix, err := parseMix(s.Mix)
	c.Mix = mix
	return err
}

// parseMix reads "fetch=130,select=100" into weights; "" means no override.
func parseMix(s string) (map[string]float64, error) {
	if s == "" {
		return nil, nil
	}
	mix := map[string]float64{}
	for _, part := range strings.Split(s, ",") {
		name, w, ok := strings.Cut(strings.TrimSpace(part), "=")
		v, err := strconv.ParseFloat(w, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("--mix: %q: want name=weight", part)
		}
		if _, dup := mix[name]; dup {
			return nil, fmt.Errorf("--mix: %q given twice", name)
		}
		mix[name] = v
	}
	return mix, messages.ValidateMix(mix)
}

func runStep(cmd *cobra.Command, c *stepConfig, log *slog.Logger) error {
	body, err := c.body()
	if err != nil {
		return err
	}
	nc, err := c.NATS.connect("imapload-step")
	if err != nil {
		return err
	}
	defer nc.Close()
	if c.Result {
		return c.result(cmd, nc, body, log)
	}
	if err := ensureSteps(cmd.Context(), nc, c.NATS.bus()); err != nil {
		return err
	}
	if err := checkStepFresh(cmd.Context(), nc, body); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "published %s %s\n", messages.StepSubject, body)
	replies, err := ramp.Broadcast(nc, body, c.Wait)
	if err != nil {
		return err
	}
	return printReplies(cmd.OutOrStdout(), replies, c.Wait)
}

// body is the step command to publish: --json, or the one of the flags.
func (c *stepConfig) body() ([]byte, error) {
	if c.JSON != "" {
		if _, err := messages.ParseStepCommand([]byte(c.JSON)); err != nil {
			return nil, usage(err)
		}
		return []byte(c.JSON), nil
	}
	sc, err := c.Step.command()
	if err != nil {
		return nil, usage(err)
	}
	return json.Marshal(sc)
}

// ensureSteps creates the stream that keeps step commands, so that the
// aggregator can check the step's batches against this one.
func ensureSteps(ctx context.Context, nc *nats.Conn, o *bus.Options) error {
	js, err := jetstream.New(nc)
	if err == nil {
		_, err = bus.EnsureSteps(ctx, js, o)
	}
	return err
}

// checkStepFresh refuses, as a usage error, a step that already has a
// result: the producers would refuse it too, and a step runs once.
func checkStepFresh(ctx context.Context, nc *nats.Conn, body []byte) error {
	sc, err := messages.ParseStepCommand(body)
	if err != nil {
		return usage(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	done, err := bus.RunResults(ctx, js, sc.Run)
	if err != nil {
		return err
	}
	if t, ok := done[sc.Step]; ok {
		return usage(fmt.Errorf("run %s step %d already has a result (published %s); a step runs once: use a fresh run id, or the next step number",
			sc.Run, sc.Step, t.UTC().Format(time.RFC3339)))
	}
	return nil
}

// result runs the step as a one-step ramp and exits with its verdict.
func (c *stepConfig) result(cmd *cobra.Command, nc *nats.Conn, body []byte, log *slog.Logger) error {
	sc, err := messages.ParseStepCommand(body)
	if err != nil {
		return usage(err)
	}
	plan := ramp.Plan{Rates: []float64{sc.Rate}, MaxSteps: 1, Threshold: c.Threshold}
	results, err := driveRamp(cmd.Context(), nc, &ramp.Options{Template: sc, Plan: plan, FirstStep: sc.Step,
		ResultWait: c.ResultWait, Bus: c.NATS.bus(), Logger: log}, cmd.OutOrStdout(), progress.IsTerminal(cmd.OutOrStdout()))
	if len(results) == 0 {
		return err
	}
	return verdictError(runReport(sc.Run, results, c.Threshold, verdict.Criteria{}, err))
}

func printReplies(w io.Writer, replies []messages.StepReply, wait time.Duration) error {
	if wait <= 0 {
		return nil
	}
	accepted := 0
	for _, r := range replies {
		if r.Accepted {
			accepted++
			fmt.Fprintf(w, "  %-24s accepted: %.1f commands/s (1/%d of the fleet rate)\n", r.Producer, r.Rate, r.Producers)
		} else {
			fmt.Fprintf(w, "  %-24s REJECTED: %s\n", r.Producer, r.Error)
		}
	}
	fmt.Fprintf(w, "%d producer(s) accepted, %d answered within %v\n", accepted, len(replies), wait)
	if len(replies) > 0 && accepted == 0 {
		return fmt.Errorf("every producer rejected the step")
	}
	return nil
}
