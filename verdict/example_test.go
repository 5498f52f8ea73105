package verdict_test

import (
	"fmt"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// A ramp whose producers' host was busy at 800 and 1600/s, where they fell
// short of the target: the knee is somewhere from 800/s up to 3200/s, the
// first step that was measured below.
func ExampleKnee() {
	busy := messages.ProducerBreakdown{Producer: "p1", Saturated: true, LagCause: messages.ReasonHostOverloaded, LagP99: 180, CPU: 0.3, CPULimit: 2, RunDelay: 0.35}
	var steps []messages.StepResult
	for i, rate := range []float64{100, 200, 400, 800, 1600, 3200} {
		s := messages.StepResult{
			Step: i + 1, TargetRate: rate, OfferedRate: rate, DeliveredRate: rate, Ratio: 1,
			Complete: true, Producers: []string{"p1"},
		}
		switch rate {
		case 800, 1600:
			s.GeneratorSaturated, s.PerProducer = true, []messages.ProducerBreakdown{busy}
			s.DeliveredRate, s.Ratio = 0.8*rate, 0.8
		case 3200:
			s.DeliveredRate, s.Ratio = 2100, 2100.0/3200
		}
		verdict.Stamp(&s, verdict.DefaultThreshold)
		steps = append(steps, s)
	}

	knee, lastHeld, invalid := verdict.Knee(steps, verdict.DefaultThreshold)
	fmt.Printf("last held: step %d at %.0f/s\n", lastHeld.Step, lastHeld.Rate)
	fmt.Printf("knee: step %d at %.0f/s, from %.0f/s (steps %v uncertain)\n", knee.Step, knee.Rate, knee.Low, knee.Uncertain)
	fmt.Printf("invalid: %v, because %s\n", invalid, steps[3].Reasons[0].Code)

	r := messages.RunReport{Knee: knee, LastHeld: lastHeld, Invalid: invalid, Steps: steps}
	verdict.Conclude(&r)
	r.Thresholds = verdict.Criteria{KneeAbove: 1000}.Check(r)
	fmt.Printf("run: %s, %s: %v (%s), exit %d\n", r.Verdict, r.Thresholds[0].Name, r.Thresholds[0].Pass, r.Thresholds[0].Detail, verdict.ExitCode(r))
	// Output:
	// last held: step 3 at 400/s
	// knee: step 6 at 3200/s, from 800/s (steps [4 5] uncertain)
	// invalid: [4 5], because host_overloaded
	// run: knee, expect-knee-above 1000/s: false (the highest rate that held is 400/s), exit 5
}
