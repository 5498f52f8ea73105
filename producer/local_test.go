package producer

import (
	"net"
	"testing"
)

func TestLocalTarget(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:143", true},
		{"localhost:993", true},
		{"[::1]:143", true},
		{"0.0.0.0:143", true},
		{"192.0.2.7:143", false}, // TEST-NET-1: no host has it
		{"mail.example.org:993", false},
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() {
				tests = append(tests, struct {
					addr string
					want bool
				}{net.JoinHostPort(n.IP.String(), "143"), true})
				break
			}
		}
	}
	for _, tt := range tests {
		if got := localTarget(tt.addr); got != tt.want {
			t.Errorf("localTarget(%q) = %v, want %v", tt.addr, got, tt.want)
		}
	}
}
