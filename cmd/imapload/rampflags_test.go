package main

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestRampFlagsConnections(t *testing.T) {
	tests := []struct {
		name    string
		conns   string
		rate    float64
		want    []int
		wantErr string
	}{
		{name: "connection ramp", conns: "1000, 2000,4000", rate: 200, want: []int{1000, 2000, 4000}},
		{name: "no rate", conns: "1000,2000", wantErr: "connection ramp rate 0"},
		{name: "rate alone", rate: 200, wantErr: "--rate: only with --connections"},
		{name: "not a count", conns: "1000,lots", rate: 200, wantErr: `--connections: "lots" is not a count`},
		{name: "falling", conns: "2000,1000", rate: 200, wantErr: "want them rising"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := defaultRamp()
			r.Connections, r.Rate = tt.conns, tt.rate
			p, _, err := r.plan("r1")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("plan() error = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(p.Connections, tt.want) || p.Rate != tt.rate {
				t.Errorf("plan() = connections %v at %v/s, error %v; want %v at %v/s", p.Connections, p.Rate, err, tt.want, tt.rate)
			}
		})
	}
}

// TestRampFlagsMin: --min is the downward search's floor, in the unit of
// --start; the default floor never refuses a first rate under it, a given
// one above the first rate is refused.
func TestRampFlagsMin(t *testing.T) {
	tests := []struct {
		name    string
		start   float64
		rates   string
		min     float64
		want    float64
		wantErr string
	}{
		{name: "the default", start: 100, min: 1, want: 1},
		{name: "a floor given", start: 100, min: 20, want: 20},
		{name: "the default under a first rate under 1/s", start: 0.5, min: 1, want: 0.5},
		{name: "the default under explicit rates", rates: "0.25,0.5", min: 1, want: 0.25},
		{name: "a floor above the start", start: 100, min: 200, wantErr: "min 200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := defaultRamp()
			r.Start, r.Rates, r.Min = tt.start, tt.rates, tt.min
			p, _, err := r.plan("r1")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("plan() error = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || p.Min != tt.want {
				t.Errorf("plan() min = %v, error %v; want %v", p.Min, err, tt.want)
			}
		})
	}
	r := defaultRamp()
	r.Min = 0
	if err := errors.Join(r.checks()...); err == nil || !strings.Contains(err.Error(), "--min 0") {
		t.Errorf("checks() with --min 0 = %v, want it refused", err)
	}
}
