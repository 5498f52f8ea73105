package preflight_test

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/preflight"
)

// listen accepts connections on 127.0.0.1:0 (wrapped by wrap, if not nil)
// and hands each to serve, until the test ends; it returns the address.
func listen(t *testing.T, wrap func(net.Listener) net.Listener, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("net.Listen() error = %v", err)
	}
	if wrap != nil {
		ln = wrap(ln)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { defer c.Close(); serve(c) })
		}
	})
	return ln.Addr().String()
}

// silent reads whatever comes (a TLS listener's handshake happens on the
// first read) until the client closes, and never greets.
func silent(c net.Conn) { _, _ = io.Copy(io.Discard, c) }

// says writes line and then waits for the client to close.
func says(line string) func(net.Conn) {
	return func(c net.Conn) {
		_, _ = io.WriteString(c, line)
		silent(c)
	}
}

// tlsListener serves TLS with a self-signed certificate and returns the
// configuration a client trusts it with.
func tlsListener(t *testing.T) (func(net.Listener) net.Listener, *tls.Config) {
	t.Helper()
	cert, pool, err := embedded.SelfSignedCert()
	if err != nil {
		t.Fatal(err)
	}
	wrap := func(ln net.Listener) net.Listener {
		return tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	}
	return wrap, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// TestCheckListeners: ports that are not well-behaved IMAP servers.
func TestCheckListeners(t *testing.T) {
	t.Parallel()
	wrapTLS, trust := tlsListener(t)
	quiet := listen(t, nil, silent)
	quietTLS := listen(t, wrapTLS, silent)
	ssh := listen(t, nil, says("SSH-2.0-OpenSSH_9.2\r\n"))
	bye := listen(t, nil, says("* BYE Too many connections\r\n"))
	for _, tc := range []struct {
		name   string
		target preflight.Target
		want   error
		says   []string
	}{
		{name: "plain port that never greets", target: preflight.Target{Addr: quiet},
			want: preflight.ErrNoGreeting, says: []string{"no greeting came within 1s", "nor did a TLS handshake succeed", "is it an IMAP port?"}},
		{name: "tls port dialled in clear text", target: preflight.Target{Addr: quietTLS},
			want: preflight.ErrTLSPort, says: []string{"a TLS handshake succeeded: add --tls"}},
		{name: "tls port that never greets", target: preflight.Target{Addr: quietTLS, TLS: true, TLSConfig: trust},
			want: preflight.ErrNoGreeting, says: []string{"TLS handshake succeeded but no greeting came"}},
		{name: "ssh port", target: preflight.Target{Addr: ssh},
			want: preflight.ErrNotIMAP, says: []string{`"SSH-2.0-OpenSSH_9.2"`, "not an IMAP greeting", "check the port in --imap"}},
		{name: "ssh port under --tls", target: preflight.Target{Addr: ssh, TLS: true},
			want: preflight.ErrNotIMAP, says: []string{"neither TLS nor IMAP"}},
		{name: "greeted with BYE", target: preflight.Target{Addr: bye},
			want: preflight.ErrGreetedBye, says: []string{`"* BYE Too many connections"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tg := tc.target
			tg.User, tg.Password, tg.GreetingWait = "user1", password, shortWait
			checkError(t, preflight.Check(t.Context(), tg), tc.want, tc.says...)
		})
	}
}

// TestCheckNoSuchHost: a name that does not resolve is named, with the
// flag to fix. The resolver is a stub that answers NXDOMAIN to every
// query, so the test sends nothing off this process.
func TestCheckNoSuchHost(t *testing.T) {
	r := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		client, server := net.Pipe()
		go answerNXDomain(server)
		return client, nil
	}}
	err := preflight.Check(t.Context(), preflight.Target{Addr: "imap.example.invalid:993", TLS: true,
		User: "user1", Password: password, Resolver: r})
	checkError(t, err, preflight.ErrNoSuchHost, "imap.example.invalid", "check the host name in --imap")
	if preflight.Mismatch(err) {
		t.Errorf("Mismatch(%v) = true, want false", err)
	}
}

// answerNXDomain answers each DNS query on c (TCP framing: a net.Pipe is
// no PacketConn) with "no such name" (RFC 1035 §4.1.1, RCODE 3).
func answerNXDomain(c net.Conn) {
	defer c.Close()
	for {
		var n uint16
		if binary.Read(c, binary.BigEndian, &n) != nil {
			return
		}
		q := make([]byte, n)
		if _, err := io.ReadFull(c, q); err != nil || n < 12 {
			return
		}
		resp := append([]byte(nil), q[:questionEnd(q)]...)
		resp[2] = 0x80 | q[2]&0x01 // a response; recursion desired as asked
		resp[3] = 0x80 | 3         // recursion available; NXDOMAIN
		clear(resp[6:12])          // no answer, authority or additional records
		_ = binary.Write(c, binary.BigEndian, uint16(len(resp)))
		if _, err := c.Write(resp); err != nil {
			return
		}
	}
}

// questionEnd is where the one question of query q ends: its name's labels,
// the zero label, then type and class.
func questionEnd(q []byte) int {
	i := 12
	for i < len(q) && q[i] != 0 {
		i += int(q[i]) + 1
	}
	return min(i+5, len(q))
}
