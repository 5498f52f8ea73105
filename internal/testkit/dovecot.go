package testkit

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// DovecotEnv is the private Dovecot that deploy/dovecot/start.sh describes
// in the environment it prints.
type DovecotEnv struct {
	Addr     string // IMAPLOAD_DOVECOT_ADDR, 127.0.0.1:port (cleartext IMAP, with STARTTLS)
	TLSAddr  string // IMAPLOAD_DOVECOT_TLS_ADDR, implicit TLS
	Prefix   string // IMAPLOAD_DOVECOT_USER_PREFIX: accounts are Prefix1..PrefixN
	Users    int    // IMAPLOAD_DOVECOT_USERS, N
	Password string // IMAPLOAD_DOVECOT_PASSWORD, the same for every account
	Dir      string // IMAPLOAD_DOVECOT_DIR, holding start.sh's cert.pem
}

// DovecotFromEnv returns the Dovecot the environment names. Without one the
// test is skipped, or fails when IMAPLOAD_E2E=1 demands the end-to-end
// suite (see Require); it fails when the environment is not start.sh's or
// has fewer than minUsers accounts.
func DovecotFromEnv(t testing.TB, minUsers int) DovecotEnv {
	t.Helper()
	Require(t, Dovecot)
	d := DovecotEnv{
		Addr: os.Getenv("IMAPLOAD_DOVECOT_ADDR"), TLSAddr: os.Getenv("IMAPLOAD_DOVECOT_TLS_ADDR"),
		Prefix: os.Getenv("IMAPLOAD_DOVECOT_USER_PREFIX"), Password: os.Getenv("IMAPLOAD_DOVECOT_PASSWORD"),
		Dir: os.Getenv("IMAPLOAD_DOVECOT_DIR"),
	}
	users, err := strconv.Atoi(os.Getenv("IMAPLOAD_DOVECOT_USERS"))
	if err != nil || users < max(minUsers, 1) || d.Prefix == "" || d.Password == "" || d.Dir == "" {
		t.Fatalf("IMAPLOAD_DOVECOT_USERS %q (want ≥ %d), _USER_PREFIX %q, _PASSWORD set %v, _DIR %q: want the output of deploy/dovecot/start.sh",
			os.Getenv("IMAPLOAD_DOVECOT_USERS"), max(minUsers, 1), d.Prefix, d.Password != "", d.Dir)
	}
	d.Users = users
	return d
}

// TLSConfig trusts the self-signed certificate start.sh made for 127.0.0.1
// (STARTTLS on Addr, implicit TLS on TLSAddr).
func (d DovecotEnv) TLSConfig(t testing.TB) *tls.Config {
	t.Helper()
	pem, err := os.ReadFile(filepath.Join(d.Dir, "cert.pem"))
	if err != nil {
		t.Fatalf("IMAPLOAD_DOVECOT_DIR %q: %v; want the output of deploy/dovecot/start.sh", d.Dir, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("%s/cert.pem: no PEM certificate", d.Dir)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// LMTPAddr returns the LMTP listener start.sh serves beside d
// (IMAPLOAD_DOVECOT_LMTP_ADDR). Without one the test is skipped, or fails
// under IMAPLOAD_E2E=1 (suite DovecotLMTP).
func (d DovecotEnv) LMTPAddr(t testing.TB) string {
	t.Helper()
	return Require(t, DovecotLMTP)
}
