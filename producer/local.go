package producer

import (
	"net"
	"strings"
)

// localTarget reports whether addr (host:port) names this host: localhost,
// a loopback address, or an address of one of its interfaces. Then the
// server under test shares the producer's CPUs, which the verdict says.
// It reads the interface list but resolves no name (a host name other than
// localhost counts as another host).
func localTarget(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() || ip.IsUnspecified() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}
