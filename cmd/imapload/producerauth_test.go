package main

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-sasl"

	"github.com/imapload/imapload/verdict"
)

// TestProducerAuthFlags checks --auth and --starttls before anything
// connects: bad values are usage errors; good ones reach the NATS dial.
func TestProducerAuthFlags(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		env   map[string]string
		usage string // "" when the flags are accepted
	}{
		{name: "both TLS modes", args: []string{"--tls", "--starttls"}, usage: "--tls and --starttls: choose one"},
		{name: "unknown method", args: []string{"--auth", "cram-md5"}, usage: `--auth "cram-md5"`},
		{name: "unknown method variable", env: map[string]string{"IMAPLOAD_AUTH": "xoauth2"}, usage: `--auth "xoauth2"`},
		{name: "plain over STARTTLS", args: []string{"--auth", "plain", "--starttls"}},
		{name: "STARTTLS without a certificate check", args: []string{"--starttls", "--tls-insecure"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			args := append([]string{"producer", "--nats", unreachableNATS, "--imap", "127.0.0.1:1", "--procs", "0"}, tt.args...)
			_, _, err := runCLI(ctx, args...)
			if tt.usage != "" {
				if exitCode(err) != verdict.ExitUsage || !strings.Contains(err.Error(), tt.usage) {
					t.Errorf("imapload %v = %v (exit %d), want a usage error containing %q", args, err, exitCode(err), tt.usage)
				}
				return
			}
			if err == nil || exitCode(err) == verdict.ExitUsage {
				t.Errorf("imapload %v = %v (exit %d), want flags accepted and a later failure", args, err, exitCode(err))
			}
		})
	}
}

// TestIMAPServerStartTLS runs `imapload imapserver --starttls` and logs in
// after STARTTLS by AUTHENTICATE PLAIN.
func TestIMAPServerStartTLS(t *testing.T) {
	srv := startCLI(t, "imapserver", "imapserver", "--users", "3", "--listen", "127.0.0.1:0", "--starttls")
	addr := srv.waitMatch(t, imapAddrRe, 15*time.Second)
	conf := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the test server's self-signed certificate
	c, err := imapclient.DialStartTLS(addr, &imapclient.Options{TLSConfig: conf})
	if err != nil {
		t.Fatalf("DialStartTLS(%s) error = %v", addr, err)
	}
	defer c.Close()
	if err := c.Authenticate(sasl.NewPlainClient("", "user3", "secret")); err != nil {
		t.Fatalf("Authenticate(PLAIN) after STARTTLS error = %v", err)
	}
	imapSession(t, c)
	if err := c.Logout().Wait(); err != nil {
		t.Errorf("Logout() = %v", err)
	}
	if err := srv.stop(t, 10*time.Second); err != nil {
		t.Errorf("imapserver --starttls returned %v after its context ended, want nil", err)
	}
}
