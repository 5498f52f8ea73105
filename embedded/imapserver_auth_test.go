package embedded_test

import (
	"errors"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-sasl"

	"github.com/imapload/imapload/embedded"
)

func TestIMAPStartTLS(t *testing.T) {
	for _, tc := range []struct {
		name  string
		login func(c *imapclient.Client) error
	}{
		{"login", func(c *imapclient.Client) error { return c.Login("user1", "secret").Wait() }},
		{"plain", func(c *imapclient.Client) error { return c.Authenticate(sasl.NewPlainClient("", "user1", "secret")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startIMAP(t, &embedded.IMAPOptions{StartTLS: true})
			c, err := imapclient.DialStartTLS(s.Addr(), &imapclient.Options{TLSConfig: s.TLSConfig()})
			if err != nil {
				t.Fatalf("DialStartTLS() error = %v", err)
			}
			defer c.Close()
			if err := tc.login(c); err != nil {
				t.Fatalf("%s after STARTTLS error = %v", tc.name, err)
			}
			if _, err := c.Select("INBOX", nil).Wait(); err != nil {
				t.Fatalf("Select() after STARTTLS error = %v", err)
			}
			if err := c.Logout().Wait(); err != nil {
				t.Errorf("Logout() after STARTTLS error = %v", err)
			}
			if st := s.Stats(); st.LoginsOK != 1 || st.CommandsByName["STARTTLS"] != 1 {
				t.Errorf("Stats() = %+v, want 1 login and 1 STARTTLS counted", st)
			}
		})
	}
}

func TestIMAPStartTLSOffered(t *testing.T) {
	for _, tc := range []struct {
		opts *embedded.IMAPOptions
		want bool
	}{{&embedded.IMAPOptions{StartTLS: true}, true}, {nil, false}} {
		s := startIMAP(t, tc.opts)
		c, err := imapclient.DialInsecure(s.Addr(), nil)
		if err != nil {
			t.Fatalf("DialInsecure() error = %v", err)
		}
		caps, err := c.Capability().Wait()
		c.Close()
		if err != nil {
			t.Fatalf("Capability() error = %v", err)
		}
		if got := caps.Has(imap.CapStartTLS); got != tc.want {
			t.Errorf("CAPABILITY has STARTTLS = %v, want %v (options %+v)", got, tc.want, tc.opts)
		}
		if !caps.Has(imap.Cap("AUTH=PLAIN")) {
			t.Errorf("CAPABILITY = %v, want AUTH=PLAIN", caps)
		}
	}
}

func TestIMAPAuthenticatePlain(t *testing.T) {
	s := startIMAP(t, nil)
	c, err := imapclient.DialInsecure(s.Addr(), nil)
	if err != nil {
		t.Fatalf("DialInsecure() error = %v", err)
	}
	defer c.Close()
	if err := c.Authenticate(sasl.NewPlainClient("", "user1", "wrong")); err == nil {
		t.Errorf("Authenticate(PLAIN, wrong password) error = nil, want NO")
	}
	if err := c.Authenticate(sasl.NewPlainClient("", "user1", "secret")); err != nil {
		t.Fatalf("Authenticate(PLAIN) error = %v", err)
	}
	if st := s.Stats(); st.LoginsOK != 1 {
		t.Errorf("Stats().LoginsOK = %d, want 1", st.LoginsOK)
	}
}

func TestIMAPStartTLSWithTLS(t *testing.T) {
	_, err := embedded.StartIMAP(&embedded.IMAPOptions{TLS: true, StartTLS: true})
	if !errors.Is(err, embedded.ErrBadOption) {
		t.Errorf("StartIMAP(TLS and StartTLS) error = %v, want ErrBadOption", err)
	}
}
