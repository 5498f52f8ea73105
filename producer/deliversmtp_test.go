package producer

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// smtpSink is an SMTP submission server on 127.0.0.1 (go-smtp) that
// requires AUTH PLAIN as user/password, over STARTTLS or implicit TLS, and
// keeps what it was given.
type smtpSink struct {
	addr     string
	clientCA *x509.CertPool
	mu       sync.Mutex
	rcpts    []string // RCPT TO of every transaction
	authed   []string // users that logged in
}

func startSMTPSink(t *testing.T, implicitTLS bool, user, password string) *smtpSink {
	t.Helper()
	cert, pool := selfSigned(t)
	k := &smtpSink{clientCA: pool}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &sinkSession{k: k, user: user, password: password}, nil
	}))
	srv.Domain, srv.TLSConfig = "sink.invalid", &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.ReadTimeout, srv.WriteTimeout = 5*time.Second, 5*time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if implicitTLS {
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	k.addr = ln.Addr().String()
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return k
}

// sinkSession refuses MAIL before a successful AUTH PLAIN.
type sinkSession struct {
	k              *smtpSink
	user, password string
	authed         bool
}

func (s *sinkSession) AuthMechanisms() []string { return []string{sasl.Plain} }
func (s *sinkSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, password string) error {
		if user != s.user || password != s.password {
			return errors.New("invalid credentials")
		}
		s.authed = true
		s.k.mu.Lock()
		s.k.authed = append(s.k.authed, user)
		s.k.mu.Unlock()
		return nil
	}), nil
}
func (s *sinkSession) Mail(string, *smtp.MailOptions) error {
	if !s.authed {
		return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "authentication required"}
	}
	return nil
}
func (s *sinkSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.k.mu.Lock()
	defer s.k.mu.Unlock()
	s.k.rcpts = append(s.k.rcpts, to)
	return nil
}
func (s *sinkSession) Data(r io.Reader) error { _, err := io.Copy(io.Discard, r); return err }
func (s *sinkSession) Reset()                 {}
func (s *sinkSession) Logout() error          { return nil }

var _ smtp.AuthSession = (*sinkSession)(nil)

// selfSigned is a certificate for 127.0.0.1 and the pool that trusts it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// TestDeliverSMTPSubmission: with SMTPStartTLS or SMTPTLS and SMTPUser,
// a delivery encrypts, logs in with AUTH PLAIN and is accepted; a wrong
// password is a delivery error that names AUTH and never holds the
// password.
func TestDeliverSMTPSubmission(t *testing.T) {
	for _, tc := range []struct {
		name              string
		implicit          bool
		password, wantErr string
	}{
		{name: "starttls", password: "s3cret"},
		{name: "implicit tls", implicit: true, password: "s3cret"},
		{name: "wrong password", password: "wrong-pw", wantErr: "AUTH: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := startSMTPSink(t, tc.implicit, "relay", "s3cret")
			o := &Options{ID: "p1", Addr: "127.0.0.1:1", Accounts: []Account{{User: "user1", Password: "x"}}, OpTimeout: 5 * time.Second,
				SMTPAddr: k.addr, SMTPTLS: tc.implicit, SMTPStartTLS: !tc.implicit, SMTPTLSConfig: &tls.Config{RootCAs: k.clientCA},
				SMTPUser: "relay", SMTPPassword: tc.password, DeliverSizes: "1k-2k:1"}
			cfg, err := o.config()
			if err != nil {
				t.Fatal(err)
			}
			env := newSessionEnv(cfg, timeline{start: time.Now().Add(-time.Millisecond), duration: time.Hour}, recorder.New("r1", 1, cfg.ID, messages.StepInfo{}, &recorder.Options{Seed: 1, Secrets: cfg.secrets}), cfg.Logger, 1)
			dl := newDeliverer(env, 1, messages.ArrivalConstant, 1)
			_, msg := dl.message(delivery{account: cfg.Accounts[0]})
			_, err = dl.send(delivery{account: cfg.Accounts[0]}, "id", msg)
			switch {
			case tc.wantErr == "" && (err != nil || len(k.rcpts) != 1 || k.rcpts[0] != "user1@example.org" || len(k.authed) != 1):
				t.Errorf("send() error = %v, recipients %v, logins %v; want nil, [user1@example.org], [relay] (AUTH over TLS: go-smtp offers it on TLS only)",
					err, k.rcpts, k.authed)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), tc.password)):
				t.Errorf("send() error = %v, want one naming %q without the password", err, tc.wantErr)
			}
		})
	}
}
