package embedded

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"time"
)

// certValidity is how long a generated certificate is valid; test servers
// live for seconds, demo servers for hours.
const certValidity = 7 * 24 * time.Hour

// SelfSignedCert makes an in-memory self-signed ECDSA P-256 certificate
// for hosts (IP addresses become IP SANs, other names DNS SANs; none means
// 127.0.0.1, ::1 and localhost) and a pool holding it for clients'
// RootCAs. It does no I/O.
func SelfSignedCert(hosts ...string) (tls.Certificate, *x509.CertPool, error) {
	if len(hosts) == 0 {
		hosts = []string{"127.0.0.1", "::1", "localhost"}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("embedded: generate key: %w", err)
	}
	tmpl, err := certTemplate(hosts)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("embedded: create certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("embedded: parse certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool, nil
}

func certTemplate(hosts []string) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("embedded: serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"imapload test"}, CommonName: hosts[0]},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return tmpl, nil
}

// serverTLS returns the server side of implicit TLS for cert.
func serverTLS(cert tls.Certificate) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// TLSConfig returns a fresh client configuration that trusts this
// server's certificate and verifies it as 127.0.0.1 (or the specific IP
// the server listens on), or nil when the
// server does not use TLS. Pass it as imapclient.Options.TLSConfig.
func (s *IMAP) TLSConfig() *tls.Config {
	if s.rootCAs == nil {
		return nil
	}
	return &tls.Config{RootCAs: s.rootCAs, ServerName: s.tlsName, MinVersion: tls.VersionTLS12}
}
