package producer

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/bus"
)

func validOptions() *Options {
	return &Options{ID: "p1", Addr: "127.0.0.1:1143", Accounts: poolAccounts(4)}
}

func TestOptionsDefaults(t *testing.T) {
	c, err := validOptions().config()
	if err != nil {
		t.Fatalf("config() error = %v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"Sessions", c.Sessions, 32},
		{"SessionsPerAccount", c.SessionsPerAccount, 2},
		{"effective sessions (4 accounts × 2)", c.sessions, 8},
		{"Queue", c.Queue, 128},
		{"OpTimeout", c.OpTimeout, 10 * time.Second},
		{"FlushInterval", c.FlushInterval, time.Second},
		{"Reservoir", c.Reservoir, 1024},
		{"Heartbeat", c.Heartbeat, 2 * time.Second},
		{"mix phases", len(c.mix.phases), 6},
		{"secrets", len(c.secrets), 1},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("config().%s = %v, want %v", ck.name, ck.got, ck.want)
		}
	}
	if c.Logger == nil {
		t.Errorf("config().Logger = nil, want a discarding logger")
	}
}

func TestOptionsErrors(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(o *Options)
		errHas string
	}{
		{"no address", func(o *Options) { o.Addr = "" }, "Addr"},
		{"address without port", func(o *Options) { o.Addr = "mail.example.org" }, "Addr"},
		{"no accounts", func(o *Options) { o.Accounts = nil }, "Accounts"},
		{"id with a dot", func(o *Options) { o.ID = "a.b" }, "ID"},
		{"negative sessions", func(o *Options) { o.Sessions = -1 }, "Sessions"},
		{"negative timeout", func(o *Options) { o.OpTimeout = -time.Second }, "OpTimeout"},
		{"local address not an IP", func(o *Options) { o.LocalAddr = "localhost" }, "LocalAddr"},
		{"heartbeat beyond the TTL", func(o *Options) {
			o.Heartbeat = 5 * time.Second
			o.Bus = &bus.Options{HeartbeatTTL: 5 * time.Second}
		}, "Heartbeat"},
		{"bad mix", func(o *Options) { o.Mix = map[string]float64{"dial": 1} }, "mix"},
		{"reservoir too large for a batch", func(o *Options) { o.Reservoir = maxReservoir + 1 }, "Reservoir"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := validOptions()
			tt.edit(o)
			_, err := o.config()
			if !errors.Is(err, ErrBadOptions) || !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("config() error = %v, want ErrBadOptions mentioning %q", err, tt.errHas)
			}
		})
	}
}

func TestNewRefusesNilConn(t *testing.T) {
	if _, err := New(nil, validOptions()); !errors.Is(err, ErrBadOptions) {
		t.Errorf("New(nil, …) error = %v, want ErrBadOptions", err)
	}
}

func TestSanitizeID(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"already valid", "host-12", "host-12"},
		{"dots and colons", "mail.example.org:1", "mail-example-org-1"},
		{"unicode", "hôte", "h--te"},
		{"too long keeps the end", strings.Repeat("a", 70) + "-99", strings.Repeat("a", 61) + "-99"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sanitizeID(tt.in); got != tt.want {
				t.Errorf("sanitizeID(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	if got := defaultID(); len(got) == 0 || sanitizeID(got) != got {
		t.Errorf("defaultID() = %q, want a valid id", got)
	}
}

func TestDeliverOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"both targets", func(o *Options) { o.LMTPAddr, o.SMTPAddr = "127.0.0.1:2", "127.0.0.1:3" }, "LMTPAddr and SMTPAddr: choose one"},
		{"bad LMTP address", func(o *Options) { o.LMTPAddr = "nowhere" }, `LMTPAddr "nowhere": want host:port`},
		{"TLS over LMTP", func(o *Options) { o.LMTPAddr, o.SMTPTLS = "127.0.0.1:2", true }, "SMTPTLS: needs SMTPAddr"},
		{"two SMTP TLS modes", func(o *Options) { o.SMTPAddr, o.SMTPTLS, o.SMTPStartTLS = "127.0.0.1:2", true, true }, "SMTPTLS and SMTPStartTLS: choose one"},
		{"SMTP password alone", func(o *Options) { o.SMTPAddr, o.SMTPPassword = "127.0.0.1:2", "x" }, "SMTPPassword: needs SMTPUser"},
		{"bad sizes", func(o *Options) { o.DeliverSizes = "8k-2k:1" }, "DeliverSizes: bad size table"},
		{"negative delivery connections", func(o *Options) { o.DeliverConns = -1 }, "DeliverConns: -1 is negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := validOptions()
			tc.edit(o)
			if _, err := o.config(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("config() error = %v, want %q", err, tc.want)
			}
		})
	}
	c, err := validOptions().config()
	if err != nil {
		t.Fatal(err)
	}
	if c.DeliverConns != 16 || c.DeliverQueue != 64 || c.InboxTimeout != 30*time.Second || c.DeliverDomain != "example.org" {
		t.Errorf("config() deliveries: conns %d, queue %d, inbox timeout %v, domain %q; want 16, 64, 30s, example.org",
			c.DeliverConns, c.DeliverQueue, c.InboxTimeout, c.DeliverDomain)
	}
}
