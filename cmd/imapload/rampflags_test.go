package main

import (
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
