package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/producer"
	"github.com/spf13/pflag"
)

// deliverFlags say where a producer delivers mail (a step's deliver_rate)
// and how: LMTP (RFC 2033) to a local delivery agent, or SMTP to an MTA or
// a submission port, with TLS and AUTH PLAIN as submission wants.
type deliverFlags struct {
	LMTP            string // --lmtp: host:port of an LMTP server
	SMTP            string // --smtp: host:port of an SMTP server
	SMTPTLS         bool   // --smtp-tls: implicit TLS (port 465)
	SMTPStartTLS    bool   // --smtp-starttls: STARTTLS (port 587)
	SMTPTLSCA       string // --smtp-tls-ca: PEM file of the CA to trust
	SMTPTLSInsecure bool   // --smtp-tls-insecure: no certificate check
	SMTPUser        string // --smtp-user: AUTH PLAIN as this user
	SMTPPassword    string // --smtp-password; never logged
}

func (d *deliverFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&d.LMTP, "lmtp", "", "deliver a step's deliver_rate by LMTP (RFC 2033) to this host:port, e.g. Dovecot's lmtp on 127.0.0.1:24")
	fs.StringVar(&d.SMTP, "smtp", "", "deliver a step's deliver_rate by SMTP to this host:port instead (an MTA on 25, submission on 587 or 465)")
	fs.BoolVar(&d.SMTPTLS, "smtp-tls", false, "with --smtp, implicit TLS (submissions, port 465)")
	fs.BoolVar(&d.SMTPStartTLS, "smtp-starttls", false, "with --smtp, upgrade with STARTTLS after EHLO (submission, port 587)")
	fs.StringVar(&d.SMTPTLSCA, "smtp-tls-ca", "", "PEM file of the CA to trust for --smtp-tls or --smtp-starttls (default: system roots)")
	fs.BoolVar(&d.SMTPTLSInsecure, "smtp-tls-insecure", false, "with --smtp-tls or --smtp-starttls, do not verify the SMTP server's certificate (test servers only)")
	fs.StringVar(&d.SMTPUser, "smtp-user", "", "with --smtp, log in with AUTH PLAIN as this user (submission needs it)")
	secretVar(fs, &d.SMTPPassword, "smtp-password", "", "password of --smtp-user; prefer --smtp-password-file or env IMAPLOAD_SMTP_PASSWORD (never logged)")
}

// checks returns the errors of the flags' values, nil for a good one.
func (d *deliverFlags) checks() []error {
	var errs []error
	for name, addr := range map[string]string{"lmtp": d.LMTP, "smtp": d.SMTP} {
		if _, _, err := net.SplitHostPort(addr); addr != "" && err != nil {
			errs = append(errs, fmt.Errorf("--%s %q: want host:port, e.g. 127.0.0.1:24", name, addr))
		}
	}
	smtpOnly := map[string]bool{"smtp-tls": d.SMTPTLS, "smtp-starttls": d.SMTPStartTLS, "smtp-user": d.SMTPUser != "",
		"smtp-tls-ca": d.SMTPTLSCA != "", "smtp-tls-insecure": d.SMTPTLSInsecure}
	for name, set := range smtpOnly {
		if set && d.SMTP == "" {
			errs = append(errs, fmt.Errorf("--%s: only with --smtp", name))
		}
	}
	if d.SMTPPassword != "" && d.SMTPUser == "" {
		errs = append(errs, errors.New("--smtp-password: needs --smtp-user, the user it logs in as"))
	}
	switch {
	case d.LMTP != "" && d.SMTP != "":
		errs = append(errs, errors.New("--lmtp and --smtp: choose one"))
	case d.SMTPTLS && d.SMTPStartTLS:
		errs = append(errs, errors.New("--smtp-tls and --smtp-starttls: choose one (--smtp-tls for port 465, --smtp-starttls for 587)"))
	case (d.SMTPTLSCA != "" || d.SMTPTLSInsecure) && !d.SMTPTLS && !d.SMTPStartTLS:
		errs = append(errs, errors.New("--smtp-tls-ca and --smtp-tls-insecure need --smtp-tls or --smtp-starttls"))
	}
	return errs
}

// target describes where deliveries go, "" without a target.
func (d *deliverFlags) target() string {
	switch {
	case d.LMTP != "":
		return "LMTP to " + d.LMTP
	case d.SMTP != "":
		return "SMTP to " + d.SMTP
	}
	return ""
}

// apply sets o's delivery options; it reads --smtp-tls-ca and warns about
// --smtp-tls-insecure.
func (d *deliverFlags) apply(o *producer.Options, log *slog.Logger) error {
	o.LMTPAddr, o.SMTPAddr, o.SMTPTLS, o.SMTPStartTLS = d.LMTP, d.SMTP, d.SMTPTLS, d.SMTPStartTLS
	o.SMTPUser, o.SMTPPassword = d.SMTPUser, d.SMTPPassword
	if !d.SMTPTLS && !d.SMTPStartTLS {
		return nil
	}
	if d.SMTPTLSInsecure {
		log.Warn("--smtp-tls-insecure: the SMTP server's certificate is NOT verified (test servers only)")
	}
	pool, err := caPool(d.SMTPTLSCA)
	o.SMTPTLSConfig = &tls.Config{RootCAs: pool, InsecureSkipVerify: d.SMTPTLSInsecure} //nolint:gosec // an explicit flag for test servers, warned about
	return err
}

// deliverRateVar declares --deliver-rate, bound to p: -1 (shown as 0)
// until given, so that run and demo can tell "not given" from 0.
func deliverRateVar(fs *pflag.FlagSet, p *float64) {
	fs.Float64Var(p, "deliver-rate", -1, "fleet-wide deliveries per second by LMTP or SMTP beside the commands (producers need --lmtp or --smtp); "+
		"run and demo, when they deliver, default to the profile's rate per account (desktop, mobile) times the accounts")
	fs.Lookup("deliver-rate").DefValue = "0"
}

// profileDeliverRate is the fleet-wide deliver rate a step of profile gets
// when --deliver-rate is not given: the profile's rate per account times
// the accounts (0 for a profile without one).
func profileDeliverRate(profile string, accounts int) float64 {
	p, _ := messages.ProfileNamed(profile)
	return p.DeliverPerAccount * float64(accounts)
}

// stepDeliveries sets the deliver rate of a run's steps: --deliver-rate
// when given, else, when the run delivers (target is set), the profile's
// rate per account times the accounts. A rate that local producers could
// not deliver is a usage error, found before anything is sent.
func stepDeliveries(t *messages.StepCommand, given float64, target string, local, accounts int) error {
	if given == -1 && target != "" {
		t.DeliverRate = profileDeliverRate(t.Profile, accounts)
	}
	if t.DeliverRate > 0 && target == "" && local > 0 {
		return usage(fmt.Errorf("--deliver-rate %v: the producers have nowhere to deliver: give --lmtp HOST:PORT or --smtp HOST:PORT", t.DeliverRate))
	}
	return nil
}
