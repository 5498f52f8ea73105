package producer

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/imapload/imapload/messages"
)

// helloName is the name the deliveries give in LHLO/EHLO.
const helloName = "imapload.invalid"

// open dials the delivery target and readies a transaction within
// OpTimeout: the TCP dial, implicit TLS or STARTTLS (SMTP only), LHLO or
// EHLO, and AUTH PLAIN when SMTPUser is set. Every failure names its stage.
func (dl *deliverer) open() (*smtp.Client, error) {
	conn, err := dl.dialer.Dial("tcp", dl.addr)
	if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
		return nil, fmt.Errorf("%sdial: %w (raise ulimit -n)", messages.GeneratorKind, err)
	}
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	conn.SetDeadline(dl.deadline(time.Now()))
	c, err := dl.client(conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	hello := map[bool]string{true: "LHLO", false: "EHLO"}[dl.lmtp]
	if err := c.Hello(helloName); err != nil {
		c.Close()
		return nil, stageError(hello, err)
	}
	if dl.auth != nil {
		if err := c.Auth(dl.auth()); err != nil {
			c.Close()
			return nil, stageError("AUTH", err)
		}
	}
	return c, nil
}

// client speaks LMTP or SMTP on conn, after the TLS the options ask for.
func (dl *deliverer) client(conn net.Conn) (*smtp.Client, error) {
	cfg := dl.env.cfg
	switch {
	case dl.lmtp:
		return smtp.NewClientLMTP(conn), nil
	case cfg.SMTPTLS:
		return smtp.NewClient(tls.Client(conn, dl.tls)), nil
	case cfg.SMTPStartTLS:
		c, err := smtp.NewClientStartTLS(conn, dl.tls)
		if err != nil {
			return nil, stageError("STARTTLS", err)
		}
		return c, nil
	}
	return smtp.NewClient(conn), nil
}

// smtpTLSConfig is the TLS configuration of SMTP deliveries, nil without
// TLS: SMTPTLSConfig, with SMTPAddr's host as server name by default.
func smtpTLSConfig(cfg *config) *tls.Config {
	if !cfg.SMTPTLS && !cfg.SMTPStartTLS {
		return nil
	}
	t := &tls.Config{}
	if cfg.SMTPTLSConfig != nil {
		t = cfg.SMTPTLSConfig.Clone()
	}
	if t.ServerName == "" {
		t.ServerName, _, _ = net.SplitHostPort(cfg.SMTPAddr)
	}
	return t
}

// smtpAuth makes the AUTH PLAIN client of SMTPUser, nil without one.
func smtpAuth(cfg *config) func() sasl.Client {
	if cfg.SMTPUser == "" || cfg.LMTPAddr != "" {
		return nil
	}
	return func() sasl.Client { return sasl.NewPlainClient("", cfg.SMTPUser, cfg.SMTPPassword) }
}
