package reporter

import (
	"fmt"
	"io"
	"testing"

	"github.com/imapload/imapload/messages"
)

// bigRamp is a long run: 40 steps, 8 phases, 500 producers each.
func bigRamp() []messages.StepResult {
	steps := make([]messages.StepResult, 40)
	for i := range steps {
		s := stepResult(i+1, 500*float64(i+1), 480*float64(i+1))
		s.Phases = map[string]messages.PhaseResult{}
		for _, p := range messages.Phases() {
			s.Phases[p.String()] = phaseResult(1000, 3, float64(i+1), 8*float64(i+1))
		}
		s.PerProducer = make([]messages.ProducerBreakdown, 500)
		for j := range s.PerProducer {
			s.PerProducer[j] = messages.ProducerBreakdown{Producer: fmt.Sprintf("p%d", j), Count: 100, Share: 0.002, P99: 4, Deviant: j == 7}
		}
		steps[i] = s
	}
	return steps
}

func BenchmarkBuild(b *testing.B) {
	steps := bigRamp()
	b.ReportAllocs()
	for b.Loop() {
		Build("bench", steps, 0, fixedNow)
	}
}

func BenchmarkRender(b *testing.B) {
	rep := Build("bench", bigRamp(), 0, fixedNow)
	for _, r := range []struct {
		name   string
		render func(io.Writer, messages.RunReport) error
	}{{"table", RenderTable}, {"json", RenderJSON}, {"csv", RenderCSV}} {
		b.Run(r.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := r.render(io.Discard, rep); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkWritePlots(b *testing.B) {
	rep := Build("bench", bigRamp(), 0, fixedNow)
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := WritePlots(dir, rep); err != nil {
			b.Fatal(err)
		}
	}
}
