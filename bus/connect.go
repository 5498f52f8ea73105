package bus

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// Connect dials NATS at url with the client name name. Credentials may come in
// the URL (nats://user:pass@host) or in creds (a .creds file path); neither
// ever appears in an error this returns, whether the URL parses or not (see
// Redact).
func Connect(serverURL, name, creds string, extra ...nats.Option) (*nats.Conn, error) {
	opts := []nats.Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.ReconnectJitter(250*time.Millisecond, time.Second),
		nats.Timeout(5 * time.Second),
	}
	if creds != "" {
		opts = append(opts, nats.UserCredentials(creds))
	}
	nc, err := nats.Connect(serverURL, append(opts, extra...)...)
	if err != nil {
		return nil, connectError(serverURL, err)
	}
	return nc, nil
}

// Redact returns a NATS URL list with the user info of every URL replaced by
// "***", for errors and logs. It reads the text, not a parse, so that a URL
// that does not parse — no scheme, a stray '%', a '#', '/', '@' or ',' in a
// password — is hidden as well as one that does.
func Redact(serverURLs string) string {
	var b strings.Builder
	done := 0 // serverURLs[:done] is written
	for _, span := range userInfoSpans(serverURLs) {
		b.WriteString(serverURLs[done:span[0]])
		b.WriteString("***")
		done = span[1]
	}
	b.WriteString(serverURLs[done:])
	return b.String()
}

// connectError is the error of a failed connection to serverURLs. The
// client's own message may quote a URL, or its part before a '#', so user
// info is removed from it too; errors.Is still sees the client's sentinels
// (nats.ErrNoServers, nats.ErrAuthorization, …).
func connectError(serverURLs string, err error) error {
	return &redactedError{msg: "bus: connect to " + Redact(serverURLs) + ": " + hideUserInfo(serverURLs, err), err: err}
}

// redactedError has no Unwrap, so the client's raw message stays out of reach.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string        { return e.msg }
func (e *redactedError) Is(target error) bool { return errors.Is(e.err, target) }

// hideUserInfo returns err's message without any part of the user info in
// serverURLs. A URL parse error quotes the URL (or the part before a '#') and
// the bad escape, so it is replaced whole when there is user info.
func hideUserInfo(serverURLs string, err error) string {
	var uerr *url.Error
	spans := userInfoSpans(serverURLs)
	if errors.As(err, &uerr) && len(spans) > 0 {
		return "not a valid URL: percent-encode any '%', '#', '/', '@', ',' or ':' in its user name or password (user info hidden)"
	}
	var pieces []string
	for _, span := range spans {
		for _, p := range strings.FieldsFunc(serverURLs[span[0]:span[1]], isURLDelim) {
			if len(p) >= 3 { // shorter ones would blot out the message
				pieces = append(pieces, p)
			}
		}
	}
	slices.SortFunc(pieces, func(a, b string) int { return len(b) - len(a) })
	msg := err.Error()
	for _, p := range pieces {
		msg = strings.ReplaceAll(msg, p, "***")
	}
	return msg
}

func isURLDelim(c rune) bool { return strings.ContainsRune(":/?#[]@!$&'()*+,;=% ", c) }

// userInfoSpans returns the [start, end) of the user info of every URL in
// the comma-separated serverURLs, without parsing them.
func userInfoSpans(s string) [][2]int {
	var spans [][2]int
	for done := 0; ; {
		at := strings.IndexByte(s[done:], '@')
		if at < 0 {
			return spans
		}
		last, next := userInfoEnd(s, done+at)
		spans = append(spans, [2]int{userInfoStart(s, done, last), last})
		done = next
	}
}

// userInfoEnd returns, for the first '@' of a URL at at, its last '@' before
// the next comma (a password may hold an '@'), and where the next URL begins.
func userInfoEnd(s string, at int) (last, next int) {
	next = len(s)
	if i := strings.IndexByte(s[at:], ','); i >= 0 {
		next = at + i + 1
	}
	return at + strings.LastIndexByte(s[at:next], '@'), next
}

// userInfoStart returns where the user info ending at at begins: after the
// scheme if there is one, else after the spaces that start the URL at from.
func userInfoStart(s string, from, at int) int {
	from = max(from, schemeEnd(s[:at]))
	for from < at && (s[from] == ' ' || s[from] == '\t') {
		from++
	}
	return from
}

// schemeEnd returns where user info may begin in s: after the last
// "scheme://" that starts a URL (at the start, after a comma or a space), so
// a "://" inside a password is not taken for one; 0 if there is none.
func schemeEnd(s string) int {
	for i := strings.LastIndex(s, "://"); i > 0; i = strings.LastIndex(s[:i], "://") {
		start := strings.LastIndexAny(s[:i], ", \t") + 1
		if isScheme(s[start:i]) {
			return i + len("://")
		}
	}
	return 0
}

// isScheme reports whether s is a URL scheme (RFC 3986, section 3.1).
func isScheme(s string) bool {
	for i, c := range s {
		letter := 'a' <= c|0x20 && c|0x20 <= 'z'
		if !letter && (i == 0 || !strings.ContainsRune("0123456789+-.", c)) {
			return false
		}
	}
	return s != ""
}
