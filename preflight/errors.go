package preflight

import "errors"

// Sentinel errors of Check, each wrapped with the address, the detail and
// the fix; check them with errors.Is. Two kinds: the server is there but
// the flags disagree with it (Mismatch reports true: fix the command line),
// or there is no IMAP server to talk to (fix the server or the address).
var (
	// ErrBadTarget is a Target Check cannot try: no address, or both TLS modes.
	ErrBadTarget = errors.New("preflight: bad target")

	// ErrNoSuchHost is a host name that does not resolve.
	ErrNoSuchHost = errors.New("preflight: the host name does not resolve")
	// ErrClosedPort is a port nothing listens on (connection refused).
	ErrClosedPort = errors.New("preflight: nothing listens on this port")
	// ErrUnreachable is a connection that got no answer (a dial timeout, no route).
	ErrUnreachable = errors.New("preflight: the server cannot be reached")
	// ErrNoGreeting is a connection on which no IMAP greeting came (nor, in
	// clear text, a TLS handshake).
	ErrNoGreeting = errors.New("preflight: no IMAP greeting")
	// ErrNotIMAP is a port that answered something other than IMAP.
	ErrNotIMAP = errors.New("preflight: this port does not speak IMAP")
	// ErrGreetedBye is a server that closed the session in its greeting (BYE).
	ErrGreetedBye = errors.New("preflight: the server refused the connection")
	// ErrNoAnswer is a command, or the TLS handshake, left unanswered.
	ErrNoAnswer = errors.New("preflight: no answer from the server")

	// ErrPlainPort is --tls against a port that speaks IMAP in clear text.
	ErrPlainPort = errors.New("preflight: this port speaks plain IMAP")
	// ErrTLSPort is a clear-text dial (or --starttls) to an implicit-TLS port.
	ErrTLSPort = errors.New("preflight: this port speaks TLS (IMAPS)")
	// ErrUntrusted is a server certificate that fails verification.
	ErrUntrusted = errors.New("preflight: the server's certificate is not trusted")
	// ErrHandshake is a TLS handshake that failed for another reason.
	ErrHandshake = errors.New("preflight: the TLS handshake failed")
	// ErrNoStartTLS is --starttls against a server that refuses STARTTLS.
	ErrNoStartTLS = errors.New("preflight: STARTTLS is not offered")
	// ErrLoginRefused is a login the server refused (NO or BAD).
	ErrLoginRefused = errors.New("preflight: the login was refused")
)

// mismatches are the errors of a server that answered, but not as the
// flags said it would.
var mismatches = []error{ErrBadTarget, ErrNotIMAP, ErrPlainPort, ErrTLSPort, ErrUntrusted, ErrHandshake, ErrNoStartTLS, ErrLoginRefused}

// Mismatch reports whether err is Check's error for a server that is there
// and answered, but not as the Target said it would (the wrong port or TLS
// mode, an untrusted certificate, a refused login): the command line needs
// fixing, and trying again will not help. It is false for nil, for a
// server that cannot be reached or did not answer, and for an ended context.
func Mismatch(err error) bool {
	for _, m := range mismatches {
		if errors.Is(err, m) {
			return true
		}
	}
	return false
}
