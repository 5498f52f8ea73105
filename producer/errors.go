package producer

import (
	"errors"
	"fmt"

	"github.com/emersion/go-imap/v2"

	"github.com/imapload/imapload/internal/opguard"
	"github.com/imapload/imapload/messages"
)

// Sentinel errors, checked with errors.Is. The messages that wrap them carry
// the detail (a line number, an option name) and never a password.
var (
	// ErrBadOptions reports Options that cannot run: a missing address or
	// account list, an invalid id, a negative size or duration, a bad mix.
	ErrBadOptions = errors.New("producer: invalid options")
	// ErrBadAccounts reports an account file or template that cannot be used.
	ErrBadAccounts = errors.New("producer: invalid accounts")
	// ErrNoAccounts reports an account source that yields no account at all.
	ErrNoAccounts = errors.New("producer: no accounts")
	// ErrIDLive reports a producer id whose registry entry another process
	// keeps alive: two producers must not share an id.
	ErrIDLive = errors.New("producer: id already live")
	// ErrRunTwice reports a second call of Producer.Run.
	ErrRunTwice = errors.New("producer: Run called twice")
)

// errShutdownGrace ends a step's publishing shutdownGrace after the
// producer was told to stop (the cause of its context).
var errShutdownGrace = errors.New("producer: stopping, and the grace to publish the last batches is over")

// Errors recorded as samples: failed IMAP operations are data, not control
// flow. Their messages are the error kinds the reports show, so they are short
// and stable. The ones imapload itself causes start with
// messages.GeneratorKind, so that they are never taken for the server's.
var (
	// errTimeout is an operation that got no reply within Options.OpTimeout;
	// the producer closed the connection (go-imap's own read timeout is 30 s).
	errTimeout = opguard.ErrTimeout
	// errIntegrity is an appended message that did not come back byte for
	// byte (or did not come back at all) when fetched right after the APPEND.
	errIntegrity = errors.New("integrity")
	// errEmptyMailbox is a FETCH, STORE, body FETCH or COPY scheduled on a session whose INBOX
	// holds no message it could address.
	errEmptyMailbox = errors.New(messages.UnaddressableKind + "INBOX is empty")
	// errNothingToMove is a MOVE with no message of imapload's in the
	// account to take, the APPEND of one having failed (or named no UID):
	// imapload moves only its own mail.
	errNothingToMove = errors.New(messages.UnaddressableKind + "no message of imapload's in the account to move (its APPEND failed)")
	// errNothingToExpunge is an EXPUNGE with no message of imapload's in the
	// account to take, the APPEND of one having failed (or named no UID):
	// imapload deletes only its own mail.
	errNothingToExpunge = errors.New(messages.UnaddressableKind + "no message of imapload's in the account to expunge (its APPEND failed)")
	// errNoMove is a MOVE not sent because the server lacks the MOVE
	// capability (RFC 6851): its fallback could expunge a user's mail.
	errNoMove = errors.New(messages.GeneratorKind + "not sent: server has no MOVE")
	// errNoUIDPlus is an EXPUNGE not sent because the server lacks UIDPLUS
	// (RFC 4315): a plain EXPUNGE could take a user's mail.
	errNoUIDPlus = errors.New(messages.GeneratorKind + "not sent: server has no UIDPLUS")
	// errNoFreeAccount means every account already has SessionsPerAccount
	// sessions; the producer caps Sessions so that it does not happen.
	errNoFreeAccount = errors.New(messages.GeneratorKind + "no account with a free session slot")
	// errSetupCut is a set-up step cut short because the measurement
	// window ended (see sessionEnv.endWindow): not the server's failure.
	errSetupCut = errors.New(messages.GeneratorKind + "set-up cut: the window ended")
	// errNotSelected is a FETCH or STORE not sent because the session had no
	// mailbox selected and selecting INBOX again failed (that SELECT is
	// recorded, as the server's error, in phase select).
	errNotSelected = errors.New(messages.GeneratorKind + "not sent: no mailbox selected")
	// errNoSession is a command of a scripted session that was not sent
	// because the session's dial or LOGIN failed (recorded, as the server's
	// error, in phase dial or login).
	errNoSession = errors.New(messages.GeneratorKind + "not sent: the session's dial or login failed")
	// errSessionEnded is a command of a scripted session that was not sent
	// because the connection ended before the script did.
	errSessionEnded = errors.New(messages.GeneratorKind + "not sent: the session's connection ended")
	// errNotScheduled is a phase the dispatcher cannot schedule (a bug).
	errNotScheduled = errors.New(messages.GeneratorKind + "not a scheduled command")
)

// blame marks an error the server attributes to imapload (response code
// CLIENTBUG, RFC 9051 §7.1) as the generator's: the server reports our
// mistake, not its failure.
func blame(err error) error {
	var ie *imap.Error
	if errors.As(err, &ie) && ie.Code == imap.ResponseCodeClientBug {
		return fmt.Errorf("%s%w", messages.GeneratorKind, err)
	}
	return err
}
