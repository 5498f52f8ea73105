package producer

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/imapload/imapload/messages"
)

func TestMixDraw(t *testing.T) {
	m, err := newMix(map[string]float64{"list": 1, "fetch": 3, "store": 0})
	if err != nil {
		t.Fatalf("newMix() error = %v", err)
	}
	tests := []struct {
		name string
		u    float64
		want messages.Phase
	}{
		{"bottom", 0, messages.List},
		{"just below the boundary", 0.2499999, messages.List},
		{"on the boundary", 0.25, messages.Fetch},
		{"top", 0.9999999, messages.Fetch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := m.draw(tt.u); got != tt.want {
				t.Errorf("mix.draw(%v) = %v, want %v", tt.u, got, tt.want)
			}
		})
	}
}

func TestNewMixErrors(t *testing.T) {
	tests := []struct {
		name    string
		weights map[string]float64
	}{
		{"empty", map[string]float64{}},
		{"all zero", map[string]float64{"list": 0}},
		{"unknown phase", map[string]float64{"delete": 1}},
		{"set-up phase", map[string]float64{"login": 1}},
		{"negative", map[string]float64{"list": -1, "fetch": 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := newMix(tt.weights); !errors.Is(err, ErrBadOptions) {
				t.Errorf("newMix(%v) error = %v, want ErrBadOptions", tt.weights, err)
			}
		})
	}
}

// TestMixProportions draws the default mix many times and checks the counts
// with a chi-square test (5 degrees of freedom; 20.5 is the 0.1% critical
// value), on a fixed seed so the test is deterministic.
func TestMixProportions(t *testing.T) {
	weights := messages.DefaultMix()
	m, err := newMix(weights)
	if err != nil {
		t.Fatalf("newMix() error = %v", err)
	}
	const n = 200_000
	rng := rand.New(rand.NewPCG(3, 4))
	counts := map[messages.Phase]int{}
	for range n {
		counts[m.draw(rng.Float64())]++
	}
	sum := 0.0
	for _, w := range weights {
		sum += w
	}
	chi2 := 0.0
	for name, w := range weights {
		p, _ := messages.ParsePhase(name)
		exp := n * w / sum
		d := float64(counts[p]) - exp
		chi2 += d * d / exp
	}
	if chi2 > 20.5 {
		t.Errorf("mix draws %v: chi-square = %.1f, want ≤ 20.5 for weights %v", counts, chi2, weights)
	}
}
