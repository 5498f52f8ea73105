package preflight

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// handshake runs the TLS handshake of --tls within Timeout.
func (t Target) handshake(ctx context.Context, conn net.Conn, cfg *tls.Config) (*tls.Conn, error) {
	hctx, cancel := context.WithTimeout(ctx, t.Timeout)
	defer cancel()
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(hctx); err != nil {
		return nil, t.tlsError(err)
	}
	return tc, nil
}

// startTLS upgrades the greeted connection with STARTTLS (RFC 9051 §6.2.1).
func (t Target) startTLS(conn net.Conn) (*imapclient.Client, error) {
	var c *imapclient.Client
	err := t.guard(conn, "STARTTLS", func() (err error) {
		c, err = imapclient.NewStartTLS(conn, &imapclient.Options{TLSConfig: t.tlsConfig()})
		return err
	})
	var ie *imap.Error
	switch {
	case err == nil:
		return c, nil
	case errors.As(err, &ie):
		return nil, fmt.Errorf("%w (%s): the server answered STARTTLS with %s %q: drop --starttls, or use --tls on its IMAPS port (often 993)",
			ErrNoStartTLS, t.Addr, ie.Type, ie.Text)
	case errors.Is(err, ErrNoAnswer):
		return nil, err
	}
	return nil, t.tlsError(err)
}

// tlsError names what a failed handshake means: clear-text IMAP where TLS
// was expected, a certificate this machine does not trust, no answer.
func (t Target) tlsError(err error) error {
	var rh tls.RecordHeaderError
	var cv *tls.CertificateVerificationError
	switch {
	case errors.As(err, &rh) && bytes.HasPrefix(rh.RecordHeader[:], []byte("* ")):
		return fmt.Errorf("%w (%s): it greeted in clear text (%s…) where --tls expects a TLS handshake: drop --tls, or use --starttls",
			ErrPlainPort, t.Addr, shown(rh.RecordHeader[:]))
	case errors.As(err, &rh):
		return fmt.Errorf("%w (%s): it answered %s, neither TLS nor IMAP: check the port in --imap", ErrNotIMAP, t.Addr, shown(rh.RecordHeader[:]))
	case errors.As(err, &cv):
		return t.certError(cv)
	case isTimeout(err) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w (%s): no answer to the TLS handshake within %s", ErrNoAnswer, t.Addr, t.Timeout)
	}
	return fmt.Errorf("%w (%s): %v", ErrHandshake, t.Addr, err)
}

// certError says why the server's certificate failed and how to trust it.
func (t Target) certError(cv *tls.CertificateVerificationError) error {
	const insecure = " (--tls-insecure skips the check: test servers only)"
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	switch {
	case errors.As(cv.Err, &ua):
		return fmt.Errorf("%w (%s): it is signed by an authority this machine does not know (%s): give that CA's certificate with --tls-ca FILE%s",
			ErrUntrusted, t.Addr, subject(cv), insecure)
	case errors.As(cv.Err, &he):
		return fmt.Errorf("%w (%s): it is for %s, not %q: name the server in --imap as its certificate does%s",
			ErrUntrusted, t.Addr, certNames(he.Certificate), he.Host, insecure)
	case errors.As(cv.Err, &ci):
		return fmt.Errorf("%w (%s): %v: renew it on the server%s", ErrUntrusted, t.Addr, ci, insecure)
	}
	return fmt.Errorf("%w (%s): %v: --tls-ca FILE trusts a private CA%s", ErrUntrusted, t.Addr, cv.Err, insecure)
}

// subject names the server certificate's subject and issuer.
func subject(cv *tls.CertificateVerificationError) string {
	if len(cv.UnverifiedCertificates) == 0 {
		return "no certificate"
	}
	leaf := cv.UnverifiedCertificates[0]
	return fmt.Sprintf("subject %q, issuer %q", leaf.Subject.String(), leaf.Issuer.String())
}

// certNames lists the names and addresses a certificate is for.
func certNames(c *x509.Certificate) string {
	if c == nil {
		return "other names"
	}
	names := append([]string(nil), c.DNSNames...)
	for _, ip := range c.IPAddresses {
		names = append(names, ip.String())
	}
	if len(names) == 0 && c.Subject.CommonName != "" {
		names = append(names, c.Subject.CommonName)
	}
	return strings.Join(names, ", ")
}
