package reporter_test

import (
	"fmt"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/reporter"
)

// p1 is the producer that took part in the examples' steps.
var p1 = []string{"p1"}

func ExampleFindKnee() {
	steps := []messages.StepResult{
		{Step: 1, TargetRate: 1000, DeliveredRate: 998, Ratio: 0.998, Producers: p1},
		{Step: 2, TargetRate: 2000, DeliveredRate: 1500, Ratio: 0.75, Producers: p1, GeneratorSaturated: true},
		{Step: 3, TargetRate: 3000, DeliveredRate: 2950, Ratio: 0.983, Producers: p1},
		{Step: 4, TargetRate: 4000, DeliveredRate: 3100, Ratio: 0.775, Producers: p1},
		{Step: 5, TargetRate: 5000, DeliveredRate: 4800, Ratio: 0.96, Producers: p1},
	}
	knee, held, invalid := reporter.FindKnee(steps, reporter.DefaultThreshold)
	fmt.Printf("knee: step %d at %.0f/s (ratio %.3f)\n", knee.Step, knee.Rate, knee.Ratio)
	fmt.Printf("last held: step %d at %.0f/s\n", held.Step, held.Rate)
	fmt.Printf("invalid: %v\n", invalid)
	// Output:
	// knee: step 4 at 4000/s (ratio 0.775)
	// last held: step 3 at 3000/s
	// invalid: [2]
}

func ExampleBuild() {
	steps := []messages.StepResult{
		{Step: 1, TargetRate: 1000, DeliveredRate: 998, Ratio: 0.998, Complete: true, Producers: p1},
		{Step: 2, TargetRate: 2000, DeliveredRate: 1500, Ratio: 0.75, Complete: true, Producers: p1},
	}
	rep := reporter.Build("r1", steps, 0, time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	for _, f := range rep.Findings {
		fmt.Println(f)
	}
	// Output:
	// at the knee (step 2) no command failed: the server fell behind by slowing down, not by refusing
}
