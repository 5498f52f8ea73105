package embedded

import (
	"bytes"
	"strconv"
)

// maxLine bounds how much of a command line the scanner buffers before it
// gives up parsing and passes the bytes through; go-imap's server rejects
// commands above 50 KiB anyway.
const maxLine = 64 << 10

// cmdScanner splits the client→server byte stream of one connection into
// commands (RFC 9051 §2.2.1: a line, possibly continued after literals), so
// the connection can charge each command once, before the server sees it,
// whichever Session methods it ends up calling. It is a pure state machine.
type cmdScanner struct {
	inCmd   bool  // the next line continues the current command
	litLeft int64 // literal bytes still to pass through
	syncLit bool  // that literal is synchronizing: the server must send "+" first
}

// step looks at the unreleased bytes buf and returns how many bytes to
// release next. start reports that they begin a new command named name
// ("UID FETCH", "LOGIN"…). n == 0 means step needs more bytes.
func (s *cmdScanner) step(buf []byte) (n int, name string, start bool) {
	if s.litLeft > 0 {
		n = int(min(s.litLeft, int64(len(buf))))
		s.litLeft -= int64(n)
		return n, "", false
	}
	i := bytes.IndexByte(buf, '\n')
	if i < 0 {
		if len(buf) >= maxLine {
			*s = cmdScanner{} // not IMAP we understand: pass through
			return len(buf), "", false
		}
		return 0, "", false
	}
	line := buf[:i+1]
	if !s.inCmd {
		name, start = commandName(line)
	}
	s.litLeft, s.syncLit = literalSuffix(line)
	s.inCmd = s.litLeft > 0
	return len(line), name, start
}

// awaitingSync reports whether the scanner expects a synchronizing
// literal, which the client sends only after the server's "+".
func (s *cmdScanner) awaitingSync() bool { return s.litLeft > 0 && s.syncLit }

// cancelLiteral forgets an expected literal the server refused (it
// answered the command instead of sending "+"), so the next line is a new
// command.
func (s *cmdScanner) cancelLiteral() { *s = cmdScanner{} }

// commandName parses "tag SP name [SP UID-subcommand]" and returns the
// upper-case name. Lines without a space (IDLE's DONE, SASL responses,
// "*" cancellations) are not commands.
func commandName(line []byte) (string, bool) {
	line = bytes.TrimRight(line, "\r\n")
	_, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok || len(rest) == 0 {
		return "", false
	}
	name, args, _ := bytes.Cut(rest, []byte{' '})
	upper := string(bytes.ToUpper(name))
	if upper == "UID" {
		sub, _, _ := bytes.Cut(args, []byte{' '})
		upper += " " + string(bytes.ToUpper(sub))
	}
	return upper, true
}

// literalSuffix reports the literal announced at the end of line:
// "{N}" (synchronizing) or "{N+}" (non-synchronizing, RFC 7888).
func literalSuffix(line []byte) (size int64, sync bool) {
	line = bytes.TrimRight(line, "\r\n")
	if len(line) < 3 || line[len(line)-1] != '}' {
		return 0, false
	}
	open := bytes.LastIndexByte(line, '{')
	if open < 0 {
		return 0, false
	}
	digits := line[open+1 : len(line)-1]
	sync = true
	if d, ok := bytes.CutSuffix(digits, []byte{'+'}); ok {
		digits, sync = d, false
	}
	size, err := strconv.ParseInt(string(digits), 10, 64)
	if err != nil || size < 0 || len(digits) == 0 || digits[0] == '-' || digits[0] == '+' {
		return 0, false
	}
	return size, sync
}

// knownCommands bounds the per-name command counters: anything else a
// client sends is counted as "OTHER".
var knownCommands = map[string]bool{
	"CAPABILITY": true, "NOOP": true, "LOGOUT": true, "STARTTLS": true,
	"AUTHENTICATE": true, "LOGIN": true, "UNAUTHENTICATE": true, "ENABLE": true,
	"ID": true, "SELECT": true, "EXAMINE": true, "CREATE": true, "DELETE": true,
	"RENAME": true, "SUBSCRIBE": true, "UNSUBSCRIBE": true, "LIST": true,
	"LSUB": true, "NAMESPACE": true, "STATUS": true, "APPEND": true, "IDLE": true,
	"CHECK": true, "CLOSE": true, "UNSELECT": true, "EXPUNGE": true, "SEARCH": true,
	"FETCH": true, "STORE": true, "COPY": true, "MOVE": true, "UID FETCH": true,
	"UID STORE": true, "UID COPY": true, "UID MOVE": true, "UID SEARCH": true,
	"UID EXPUNGE": true,
}

// countedName maps a parsed command name to its counter key.
func countedName(name string) string {
	if knownCommands[name] {
		return name
	}
	return "OTHER"
}

// mailboxCommand reports whether a command touches the mail store and so
// pays a slow account's SlowDelay.
func mailboxCommand(name string) bool {
	switch name {
	case "LOGOUT", "CAPABILITY", "ENABLE", "ID", "LOGIN", "AUTHENTICATE", "STARTTLS":
		return false
	}
	return true
}
