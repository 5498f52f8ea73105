package embedded

import (
	"testing"
	"time"
)

func TestServiceEnd(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	const service = 10 * time.Millisecond
	tests := []struct {
		name string
		free time.Time // when the slot's previous command ended on schedule
		now  time.Time
		want time.Time
	}{
		{name: "never used", free: time.Time{}, now: t0, want: t0.Add(service)},
		{name: "taken over on time", free: t0, now: t0, want: t0.Add(service)},
		{name: "timer fired late", free: t0, now: t0.Add(time.Millisecond), want: t0.Add(service)},
		{name: "idle slot", free: t0, now: t0.Add(time.Second), want: t0.Add(time.Second + service)},
		{name: "previous command aborted", free: t0.Add(5 * time.Millisecond), now: t0, want: t0.Add(service)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := serviceEnd(tt.free, tt.now, service); !got.Equal(tt.want) {
				t.Errorf("serviceEnd(%v, %v) = %v, want %v", tt.free, tt.now, got, tt.want)
			}
		})
	}
}

func TestSlowAccountSpread(t *testing.T) {
	tests := []struct {
		fraction float64
		min, max int // of 1000 numbered accounts
	}{
		{0, 0, 0},
		{0.1, 60, 140},
		{0.5, 450, 550},
		{1, 1000, 1000},
	}
	for _, tt := range tests {
		n := 0
		for i := 1; i <= 1000; i++ {
			if slowAccount(UserName(i), tt.fraction) {
				n++
			}
		}
		if n < tt.min || n > tt.max {
			t.Errorf("slowAccount(user1..user1000, %v) = %d slow, want %d..%d", tt.fraction, n, tt.min, tt.max)
		}
	}
}
