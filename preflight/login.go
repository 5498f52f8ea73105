package preflight

import (
	"errors"
	"fmt"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-sasl"
)

// login logs in as t.User (LOGIN, or AUTHENTICATE PLAIN), waiting as long
// as Timeout for the answer: a server delays a refusal on purpose, and a
// refusal must read as one. It then logs out. A PREAUTH greeting needs no
// login.
func (t Target) login(c *imapclient.Client) error {
	if c.State() == imap.ConnStateAuthenticated {
		return nil
	}
	op := func() error { return c.Login(t.User, t.Password).Wait() }
	what := "LOGIN"
	if t.Plain {
		op = func() error { return c.Authenticate(sasl.NewPlainClient("", t.User, t.Password)) }
		what = "AUTHENTICATE PLAIN"
	}
	if err := t.guard(c, what, op); err != nil {
		return t.loginError(what, err)
	}
	_ = t.guard(c, "LOGOUT", c.Logout().Wait)
	return nil
}

// loginError names what a failed login means and what to change. The
// password is in none of them: go-imap's errors carry the server's answer
// only.
func (t Target) loginError(what string, err error) error {
	var ie *imap.Error
	switch {
	case errors.Is(err, ErrNoAnswer):
		return err
	case !errors.As(err, &ie):
		return fmt.Errorf("%w (%s): the connection failed at %s: %v", ErrNoAnswer, t.Addr, what, err)
	case ie.Code == imap.ResponseCodePrivacyRequired:
		return fmt.Errorf("%w (%s): %s %q: the server takes passwords over TLS only: add --starttls, or --tls on its IMAPS port",
			ErrLoginRefused, t.Addr, ie.Type, ie.Text)
	case ie.Type == imap.StatusResponseTypeBad && t.Plain:
		return fmt.Errorf("%w (%s): the server answered AUTHENTICATE PLAIN with BAD %q: drop --auth plain (LOGIN is the default)",
			ErrLoginRefused, t.Addr, ie.Text)
	}
	return fmt.Errorf("%w (%s): %s of %q: %s%s %q: check the password (--accounts-password-file, or the accounts file) and the user name",
		ErrLoginRefused, t.Addr, what, t.User, ie.Type, code(ie), ie.Text)
}

// code is " [CODE]" of the server's answer, "" without one.
func code(ie *imap.Error) string {
	if ie.Code == "" {
		return ""
	}
	return " [" + string(ie.Code) + "]"
}
