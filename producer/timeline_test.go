package producer

import (
	"testing"
	"time"
)

func TestTimeline(t *testing.T) {
	t0 := time.Now()
	tl := timeline{start: t0, warmup: time.Second, duration: 3 * time.Second}
	tests := []struct {
		name       string
		at         time.Duration // since the step start
		wantIn     bool
		wantOffset time.Duration
	}{
		{"step start is warm-up", 0, false, -time.Second},
		{"end of warm-up", time.Second - 1, false, -1},
		{"window start", time.Second, true, 0},
		{"inside", 2500 * time.Millisecond, true, 1500 * time.Millisecond},
		{"last instant", 4*time.Second - 1, true, 3*time.Second - 1},
		{"window end is outside", 4 * time.Second, false, 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at := t0.Add(tt.at)
			if got := tl.inWindow(at); got != tt.wantIn {
				t.Errorf("timeline.inWindow(start+%v) = %v, want %v", tt.at, got, tt.wantIn)
			}
			if got := tl.offset(at); got != tt.wantOffset {
				t.Errorf("timeline.offset(start+%v) = %v, want %v", tt.at, got, tt.wantOffset)
			}
		})
	}
	if got := tl.end().Sub(t0); got != 4*time.Second {
		t.Errorf("timeline.end() = start+%v, want start+4s", got)
	}
}
