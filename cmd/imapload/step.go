package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/ramp"
	"github.com/imapload/imapload/reporter"
	"github.com/imapload/imapload/verdict"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
)

func stepCmd() *cobra.Command {
	cmd := &cobra.Command{
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
		RunE: runStep,
	}
	addNATSFlags(cmd)
	addStepFlags(cmd)
	cmd.Flags().String("json", "", "the step command as JSON (instead of the flags)")
	cmd.Flags().Duration("wait", time.Second, "how long to collect producers' answers (0: publish only)")
	cmd.Flags().Bool("result", false, "wait for the step's result and exit with its verdict")
	cmd.Flags().Duration("result-wait", time.Minute, "with --result, how long past the step's end to wait for it")
	cmd.Flags().Float64("threshold", reporter.DefaultThreshold, "with --result, delivered/target ratio under which the step is below")
	return cmd
}

func addStepFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.String("run", "", "run id (letters, digits, '-', '_')")
	f.Int("step", 1, "step number, from 1")
	f.Float64("rate", 0, "fleet-wide offered rate, IMAP commands per second")
	f.Duration("duration", 30*time.Second, "measurement window of the step")
	f.Float64("producer-rate", 0, "per-producer rate override, commands/s")
	f.Int("producers", 0, "divide the rate by this many producers instead of the live count")
	addShapeFlags(cmd)
}

// addShapeFlags adds the flags that shape every step: warm-up, stagger, mix
// and arrival (used by step, ramp and demo).
func addShapeFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.Duration("warmup", -1, "warm-up before each measurement window (default: stagger + 1s, at most half the duration)")
	f.Duration("stagger", -1, "window over which session starts are spread (default: min(2s, duration/4))")
	hideDefault(f.Lookup("warmup"))
	hideDefault(f.Lookup("stagger"))
	f.String("mix", "", "workload weights, e.g. fetch=130,select=100,list=50,store=50,append=10,logout=20")
	f.String("arrival", "", "constant (default) or poisson")
}

// readShape sets c's warm-up, stagger, mix and arrival from the shape flags;
// a negative duration flag leaves the contract's default.
func readShape(cmd *cobra.Command, c *messages.StepCommand) error {
	f := cmd.Flags()
	c.Arrival = flagString(cmd, "arrival")
	for name, dst := range map[string]**messages.Duration{"warmup": &c.Warmup, "stagger": &c.Stagger} {
		if v, _ := f.GetDuration(name); v >= 0 {
			md := messages.Duration(v)
			*dst = &md
		}
	}
	mix, err := parseMix(flagString(cmd, "mix"))
	c.Mix = mix
	return err
}

// stepFromFlags builds and validates a StepCommand from the step flags.
func stepFromFlags(cmd *cobra.Command) (messages.StepCommand, error) {
	f := cmd.Flags()
	c := messages.StepCommand{Run: flagString(cmd, "run")}
	c.Step, _ = f.GetInt("step")
	c.Rate, _ = f.GetFloat64("rate")
	c.ProducerRate, _ = f.GetFloat64("producer-rate")
	c.Producers, _ = f.GetInt("producers")
	d, _ := f.GetDuration("duration")
	c.Duration = messages.Duration(d)
	if err := readShape(cmd, &c); err != nil {
		return c, err
	}
	return c, c.Validate()
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

func runStep(cmd *cobra.Command, _ []string) error {
	body, err := stepBody(cmd)
	if err != nil {
		return err
	}
	nc, err := connectNATS(cmd, "imapload-step")
	if err != nil {
		return err
	}
	defer nc.Close()
	if r, _ := cmd.Flags().GetBool("result"); r {
		return stepResult(cmd, nc, body)
	}
	if err := ensureSteps(cmd, nc); err != nil {
		return err
	}
	wait, _ := cmd.Flags().GetDuration("wait")
	fmt.Fprintf(cmd.OutOrStdout(), "published %s %s\n", messages.StepSubject, body)
	replies, err := ramp.Broadcast(nc, body, wait)
	if err != nil {
		return err
	}
	return printReplies(cmd.OutOrStdout(), replies, wait)
}

func stepBody(cmd *cobra.Command) ([]byte, error) {
	if js := flagString(cmd, "json"); js != "" {
		if _, err := messages.ParseStepCommand([]byte(js)); err != nil {
			return nil, usage(err)
		}
		return []byte(js), nil
	}
	c, err := stepFromFlags(cmd)
	if err != nil {
		return nil, usage(err)
	}
	return json.Marshal(c)
}

// ensureSteps creates the stream that keeps step commands, so that the
// aggregator can check the step's batches against this one.
func ensureSteps(cmd *cobra.Command, nc *nats.Conn) error {
	js, err := jetstream.New(nc)
	if err == nil {
		_, err = bus.EnsureSteps(cmd.Context(), js, busOptions(cmd))
	}
	return err
}

// stepResult runs the step as a one-step ramp and exits with its verdict.
func stepResult(cmd *cobra.Command, nc *nats.Conn, body []byte) error {
	c, err := messages.ParseStepCommand(body)
	if err != nil {
		return usage(err)
	}
	f := cmd.Flags()
	wait, _ := f.GetDuration("result-wait")
	threshold, _ := f.GetFloat64("threshold")
	plan := ramp.Plan{Rates: []float64{c.Rate}, MaxSteps: 1, Threshold: threshold}
	results, err := driveRamp(cmd.Context(), nc, &ramp.Options{Template: c, Plan: plan, FirstStep: c.Step,
		ResultWait: wait, Bus: busOptions(cmd), Logger: logger(cmd)}, cmd.OutOrStdout())
	if len(results) == 0 {
		return err
	}
	return verdictError(runReport(c.Run, results, threshold, verdict.Criteria{}, err))
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
