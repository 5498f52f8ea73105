package main

import (
	"context"
	"crypto/tls"
	"log/slog"

	"github.com/imapload/imapload/preflight"
	"github.com/imapload/imapload/producer"
)

// checkServer logs in once as a to the IMAP server the flags name, the way
// the load will reach it (tlsCfg is tlsConfig's, auth the --auth method),
// before any load: a mistake in --imap, the TLS flags or the password ends
// the command at once with its fix (package preflight), instead of a run
// whose every session fails. It is what `seed` and `run` call before they
// start.
//
// Exit codes: 2 (usage) when the server answered otherwise than the flags
// said (plain IMAP under --tls, TLS without it, an untrusted certificate,
// no STARTTLS, a refused login): the command line needs fixing and a retry
// cannot help; 1 when there is no server to talk to (a closed port, a name
// that does not resolve, no answer): like an unreachable NATS, the run
// could not be carried out, and trying again later may work.
func (c *imapConnFlags) checkServer(ctx context.Context, tlsCfg *tls.Config, auth string, a producer.Account) error {
	return preflightError(preflight.Check(ctx, c.target(tlsCfg, auth, a)))
}

// target is the preflight target of the flags, logging in as a.
func (c *imapConnFlags) target(tlsCfg *tls.Config, auth string, a producer.Account) preflight.Target {
	return preflight.Target{Addr: c.IMAP, TLS: c.TLS, StartTLS: c.StartTLS, TLSConfig: tlsCfg, LocalAddr: c.LocalAddr,
		Plain: auth == producer.AuthPlain, User: a.User, Password: a.Password}
}

// preflightError gives a preflight error its exit code (see checkServer).
func preflightError(err error) error {
	if preflight.Mismatch(err) {
		return usage(err)
	}
	return err
}

// warnServer runs checkServer in the background and logs what it finds as
// a warning, for a producer: a fleet's producers may start before the
// server they load, so a server not there yet must not stop them, but a
// mistake in their flags is better named at start than read from a
// step's errors. It returns at once; stop waits for the check to end.
func (c *imapConnFlags) warnServer(ctx context.Context, tlsCfg *tls.Config, auth string, a producer.Account, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := preflight.Check(ctx, c.target(tlsCfg, auth, a))
		switch {
		case ctx.Err() != nil:
		case preflight.Mismatch(err):
			log.Warn("producer: the IMAP server does not answer as the flags say: every session will fail", "err", err)
		case err != nil:
			log.Warn("producer: the IMAP server cannot be reached yet: a step's sessions fail until it is up", "err", err)
		default:
			log.Debug("producer: the IMAP server answered and one account logged in", "imap", c.IMAP, "user", a.User)
		}
	}()
	return func() { cancel(); <-done }
}
