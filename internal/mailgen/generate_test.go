package mailgen

import (
	"math/rand/v2"
	"testing"
)

// TestB64Length: the base64 body of b64Length's raw bytes and the bytes
// it leaves add up to the budget.
func TestB64Length(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for budget := 1; budget < 400; budget++ {
		raw, short := b64Length(budget)
		if got := len(appendBase64(r, nil, raw)) + short; raw%3 != 0 || short > 5 || got != budget {
			t.Fatalf("b64Length(%d) = %d, %d: %d bytes in all", budget, raw, short, got)
		}
	}
}
