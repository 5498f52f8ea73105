package producer

import (
	"slices"
	"testing"
	"time"
)

// TestStaggerOffsetsCoverWindow checks that each producer's session starts
// fill the stagger window evenly and that producers are offset from each
// other.
func TestStaggerOffsetsCoverWindow(t *testing.T) {
	tests := []struct {
		name   string
		id     string
		n      int
		window time.Duration
	}{
		{"32 sessions over 2s", "host-a-1", 32, 2 * time.Second},
		{"8 sessions over 1s", "p2", 8, time.Second},
		{"1 session", "p3", 1, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var offs []time.Duration
			for k := range tt.n {
				o := staggerOffset(tt.id, k, tt.n, tt.window)
				if o < 0 || o >= tt.window {
					t.Fatalf("staggerOffset(%q, %d, %d, %v) = %v, want in [0, %v)", tt.id, k, tt.n, tt.window, o, tt.window)
				}
				offs = append(offs, o)
			}
			slices.Sort(offs)
			step := tt.window / time.Duration(tt.n)
			for i := 1; i < len(offs); i++ {
				if gap := offs[i] - offs[i-1]; gap < step-time.Microsecond || gap > step+time.Microsecond {
					t.Errorf("gap between session starts %d and %d = %v, want %v", i-1, i, gap, step)
				}
			}
		})
	}
}

func TestStaggerOffsetsDifferByProducer(t *testing.T) {
	ids := []string{"p1", "p2", "p3", "host-1234", "host-1235"}
	seen := map[time.Duration]string{}
	for _, id := range ids {
		o := staggerOffset(id, 0, 1, time.Hour)
		if other, dup := seen[o]; dup {
			t.Errorf("staggerOffset(%q) = staggerOffset(%q) = %v, want producers offset apart", id, other, o)
		}
		seen[o] = id
	}
	if o := staggerOffset("p1", 3, 8, 0); o != 0 {
		t.Errorf("staggerOffset with no window = %v, want 0", o)
	}
}
