package reporter

import (
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
)

// TestDeliveriesOnly: a step below on its deliveries or their arrivals
// alone is told apart from one whose commands fell short too.
func TestDeliveriesOnly(t *testing.T) {
	tests := []struct {
		below string
		want  bool
	}{
		{"", false},
		{"deliveries: accepted 10.0 of 40.0/s (25.0%, under 90%)", true},
		{"deliveries: accepted 10.0 of 40.0/s (25.0%, under 90%); time to inbox: 3 of 9 deliveries …", true},
		{"command rate: delivered 50.0 of 100.0/s (50.0%, under 90%); deliveries: accepted 1.0 of 4.0/s", false},
		{"held connections: 5 of 10 held through the window (50.0%, under 90%)", false},
	}
	for _, tt := range tests {
		if got := deliveriesOnly(&messages.StepResult{Below: tt.below}); got != tt.want {
			t.Errorf("deliveriesOnly(Below %q) = %v, want %v", tt.below, got, tt.want)
		}
	}
	if f := deliveriesServerFinding("at the knee (step 1)", "the server's 2 workers were busy 20% of the window"); !strings.Contains(f, "delivery path") {
		t.Errorf("deliveriesServerFinding() = %q, want it to name the delivery path", f)
	}
}
