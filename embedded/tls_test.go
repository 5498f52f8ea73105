package embedded_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"testing"

	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/internal/testkit"
)

func TestIMAPTLS(t *testing.T) {
	s := startIMAP(t, &embedded.IMAPOptions{TLS: true})
	c, err := imapclient.DialTLS(s.Addr(), &imapclient.Options{TLSConfig: s.TLSConfig()})
	if err != nil {
		t.Fatalf("DialTLS() error = %v", err)
	}
	defer c.Close()
	if err := c.Login("user1", "secret").Wait(); err != nil {
		t.Fatalf("Login() over TLS error = %v", err)
	}
	if _, err := c.Select("INBOX", nil).Wait(); err != nil {
		t.Fatalf("Select() over TLS error = %v", err)
	}
	if err := c.Logout().Wait(); err != nil {
		t.Errorf("Logout() over TLS error = %v", err)
	}
	if st := s.Stats(); st.CommandsByName["SELECT"] != 1 || st.LoginsOK != 1 {
		t.Errorf("Stats() over TLS = %+v, want 1 SELECT and 1 login counted", st)
	}
}

func TestIMAPTLSUntrusted(t *testing.T) {
	s := startIMAP(t, &embedded.IMAPOptions{TLS: true})
	_, err := imapclient.DialTLS(s.Addr(), &imapclient.Options{TLSConfig: &tls.Config{ServerName: "127.0.0.1", RootCAs: x509.NewCertPool()}})
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Errorf("DialTLS() without the CA error = %v, want x509.UnknownAuthorityError", err)
	}
	testkit.WaitFor(t, waitLong, "the failed connection to close", func() bool { return s.Stats().Active == 0 })
}

func TestIMAPTLSConfigWithoutTLS(t *testing.T) {
	s := startIMAP(t, nil)
	if cfg := s.TLSConfig(); cfg != nil {
		t.Errorf("TLSConfig() = %v without TLS, want nil", cfg)
	}
}

func TestSelfSignedCert(t *testing.T) {
	tests := []struct {
		name   string
		hosts  []string
		verify string // name the certificate must verify for
	}{
		{name: "defaults, IPv4", verify: "127.0.0.1"},
		{name: "defaults, IPv6", verify: "::1"},
		{name: "defaults, DNS", verify: "localhost"},
		{name: "custom DNS", hosts: []string{"imap.test"}, verify: "imap.test"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cert, pool, err := embedded.SelfSignedCert(tt.hosts...)
			if err != nil {
				t.Fatalf("SelfSignedCert() error = %v", err)
			}
			opts := x509.VerifyOptions{Roots: pool, DNSName: tt.verify}
			if _, err := cert.Leaf.Verify(opts); err != nil {
				t.Errorf("Leaf.Verify(%s) error = %v", tt.verify, err)
			}
		})
	}
}

func TestSelfSignedCertHandshake(t *testing.T) {
	cert, pool, err := embedded.SelfSignedCert()
	if err != nil {
		t.Fatalf("SelfSignedCert() error = %v", err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatalf("tls.Listen() error = %v", err)
	}
	defer ln.Close()
	accepted := make(chan error, 1)
	go func() {
		conn, err := ln.Accept()
		if err == nil {
			err = conn.(*tls.Conn).Handshake()
			conn.Close()
		}
		accepted <- err
	}()
	conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatalf("tls.Dial() error = %v", err)
	}
	conn.Close()
	if err := <-accepted; err != nil && !errors.Is(err, net.ErrClosed) {
		t.Errorf("server Handshake() error = %v", err)
	}
}
