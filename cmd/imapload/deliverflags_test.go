package main

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
)

// TestDeliverFlagsChecks: each impossible combination of the delivery
// flags is refused in its own terms.
func TestDeliverFlagsChecks(t *testing.T) {
	tests := []struct {
		name    string
		flags   deliverFlags
		wantErr string
	}{
		{name: "none", flags: deliverFlags{}},
		{name: "lmtp", flags: deliverFlags{LMTP: "127.0.0.1:24"}},
		{name: "submission", flags: deliverFlags{SMTP: "mail:587", SMTPStartTLS: true, SMTPUser: "relay", SMTPPassword: "x"}},
		{name: "both targets", flags: deliverFlags{LMTP: "a:24", SMTP: "b:25"}, wantErr: "--lmtp and --smtp: choose one"},
		{name: "no port", flags: deliverFlags{LMTP: "127.0.0.1"}, wantErr: `--lmtp "127.0.0.1": want host:port`},
		{name: "tls over lmtp", flags: deliverFlags{LMTP: "a:24", SMTPTLS: true}, wantErr: "--smtp-tls: only with --smtp"},
		{name: "two tls modes", flags: deliverFlags{SMTP: "b:465", SMTPTLS: true, SMTPStartTLS: true}, wantErr: "choose one"},
		{name: "password without user", flags: deliverFlags{SMTP: "b:587", SMTPStartTLS: true, SMTPPassword: "x"}, wantErr: "--smtp-password: needs --smtp-user"},
		{name: "ca without tls", flags: deliverFlags{SMTP: "b:25", SMTPTLSCA: "ca.pem"}, wantErr: "need --smtp-tls or --smtp-starttls"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := errors.Join(tt.flags.checks()...)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("deliverFlags%+v.checks() = %v, want %q", tt.flags, err, tt.wantErr)
			}
		})
	}
}

// TestStepDeliveries: --deliver-rate wins; without it a run that delivers
// offers the profile's rate per account times the accounts; a rate local
// producers cannot deliver is a usage error.
func TestStepDeliveries(t *testing.T) {
	desktop, _ := messages.ProfileNamed("desktop")
	tests := []struct {
		name           string
		profile        string
		given          float64
		target         string
		local          int
		want           float64
		wantExit2Error bool
	}{
		{name: "given", given: 5, target: "LMTP to a:24", local: 1, want: 5},
		{name: "given zero", profile: "desktop", given: 0, target: "LMTP to a:24", local: 1, want: 0},
		{name: "profile's", profile: "desktop", given: -1, target: "LMTP to a:24", local: 1, want: desktop.DeliverPerAccount * 100},
		{name: "profile without deliveries", profile: "webmail", given: -1, target: "LMTP to a:24", local: 1, want: 0},
		{name: "no target, not given", profile: "desktop", given: -1, local: 1, want: 0},
		{name: "no target, given", given: 5, local: 1, want: 5, wantExit2Error: true},
		{name: "no target, remote producers only", given: 5, local: 0, want: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := messages.StepCommand{Profile: tt.profile}
			if tt.given != -1 {
				c.DeliverRate = tt.given // as shapeFlags.apply sets it
			}
			err := stepDeliveries(&c, tt.given, tt.target, tt.local, 100)
			if math.Abs(c.DeliverRate-tt.want) > 1e-12 || (err != nil) != tt.wantExit2Error || err != nil && exitCode(err) != 2 {
				t.Errorf("stepDeliveries() = rate %v, error %v; want %v, error %v (exit 2)", c.DeliverRate, err, tt.want, tt.wantExit2Error)
			}
		})
	}
}
