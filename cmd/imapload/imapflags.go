package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/imapload/imapload/producer"
	"github.com/spf13/pflag"
)

// The flags of every command that logs in to the IMAP server under test
// (producer, seed): where it is, how to encrypt, which accounts, how to
// log in.

// imapConnFlags say how to reach the IMAP server.
type imapConnFlags struct {
	IMAP        string // --imap: the server's host:port
	TLS         bool   // --tls: implicit TLS
	StartTLS    bool   // --starttls: plain TCP upgraded by STARTTLS
	TLSCA       string // --tls-ca: PEM file of the CA to trust, "" for the system roots
	TLSInsecure bool   // --tls-insecure: no certificate check (test servers only)
	LocalAddr   string // --local-addr: source IP of every dial
}

func (c *imapConnFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&c.IMAP, "imap", "", "IMAP server host:port (required)")
	fs.BoolVar(&c.TLS, "tls", false, "implicit TLS (IMAPS)")
	fs.BoolVar(&c.StartTLS, "starttls", false, "dial plain TCP and upgrade with STARTTLS after the greeting (not with --tls)")
	fs.StringVar(&c.TLSCA, "tls-ca", "", "PEM file of the CA to trust for --tls or --starttls (default: system roots)")
	fs.BoolVar(&c.TLSInsecure, "tls-insecure", false, "with --tls or --starttls, do not verify the server certificate: anyone on the path can read the passwords (test servers only)")
	fs.StringVar(&c.LocalAddr, "local-addr", "", "source IP for every dial")
}

// checkTLSMode refuses both TLS modes at once.
func checkTLSMode(implicit, startTLS bool) error {
	if implicit && startTLS {
		return errors.New("--tls and --starttls: choose one (--tls for an IMAPS port such as 993, --starttls for a plain port such as 143)")
	}
	return nil
}

// tlsConfig returns the configuration of --tls or --starttls, nil without
// either. --tls-ca and --tls-insecure without them would be ignored in
// silence, so they are usage errors; --tls-insecure is warned about at every
// start, by role (the command's name).
func (c *imapConnFlags) tlsConfig(log *slog.Logger, role string) (*tls.Config, error) {
	encrypted := c.TLS || c.StartTLS
	switch {
	case !encrypted && c.TLSInsecure:
		return nil, usage(errors.New("--tls-insecure needs --tls or --starttls: it turns off the certificate check of TLS connections"))
	case !encrypted && c.TLSCA != "":
		return nil, usage(errors.New("--tls-ca needs --tls or --starttls: it names the CA of TLS connections"))
	case !encrypted:
		return nil, nil
	case c.TLSInsecure:
		log.Warn(role + ": --tls-insecure: the IMAP server's certificate is NOT verified; anyone on the network path can " +
			"impersonate the server and read every account's password. Use it for test servers only; --tls-ca trusts a private CA")
	}
	cfg := &tls.Config{InsecureSkipVerify: c.TLSInsecure} //nolint:gosec // an explicit flag for test servers, warned about
	var err error
	cfg.RootCAs, err = caPool(c.TLSCA)
	return cfg, err
}

// caPool returns the certificates of the PEM file path, nil (the system
// roots) if path is "".
func caPool(path string) (*x509.CertPool, error) {
	if path == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--tls-ca %s: no PEM certificate", path)
	}
	return pool, nil
}

// accountFlags name the accounts: a file, or a template and a password.
type accountFlags struct {
	AccountsFile     string // --accounts-file of user:password lines
	AccountsTemplate string // --accounts-template, numbered from 1 (without AccountsFile)
	AccountsCount    int    // --accounts-count made from the template
	AccountsPassword string // --accounts-password of template accounts; never logged
}

func (p *accountFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&p.AccountsFile, "accounts-file", "", "file of user:password lines")
	fs.StringVar(&p.AccountsTemplate, "accounts-template", "user%d", "account name template, numbered from 1 (without --accounts-file)")
	fs.IntVar(&p.AccountsCount, "accounts-count", 100, "accounts made from the template")
	secretVar(fs, &p.AccountsPassword, "accounts-password", "secret", "password of template accounts; prefer --accounts-password-file or env IMAPLOAD_ACCOUNTS_PASSWORD, as ps shows flags (never logged)")
}

func (p *accountFlags) check() error {
	return checkInt("accounts-count", p.AccountsCount, atLeast(1))
}

// accounts reads the accounts file, or makes the template's accounts.
func (p *accountFlags) accounts() ([]producer.Account, error) {
	if p.AccountsFile != "" {
		f, err := os.Open(p.AccountsFile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return producer.ParseAccounts(f)
	}
	return producer.TemplateAccounts(p.AccountsTemplate, p.AccountsCount, p.AccountsPassword)
}

// authVar declares --auth, bound to p; more ends its usage.
func authVar(fs *pflag.FlagSet, p *string, more string) {
	fs.StringVar(p, "auth", producer.AuthLogin, "how to log in: login (LOGIN) or plain (AUTHENTICATE PLAIN)"+more)
}

// checkAuth checks --auth against the producer's login methods.
func checkAuth(method string) error {
	if method != producer.AuthLogin && method != producer.AuthPlain {
		return fmt.Errorf("--auth %q: want %s (LOGIN) or %s (AUTHENTICATE PLAIN)", method, producer.AuthLogin, producer.AuthPlain)
	}
	return nil
}
