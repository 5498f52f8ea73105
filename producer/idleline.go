package producer

import (
	"bufio"
	"bytes"
	"errors"
	"strconv"
	"strings"

	"github.com/imapload/imapload/messages"
)

// What a held connection reads and writes: response lines (literals
// skipped) and quoted strings (RFC 9051 §4.3).

// errUnquotable is an account whose user or password cannot be sent as an
// IMAP quoted string (a CR, LF or NUL in it); the held connection is not
// tried. It is imapload's problem, not the server's.
var errUnquotable = errors.New(messages.GeneratorKind + "account not sendable as a quoted string (CR, LF or NUL)")

// maxLiteral bounds a literal in a response that a held connection skips.
const maxLiteral = 1 << 20

// line reads one response line and returns its start without the CRLF
// (valid until the next read). A line longer than the reader's buffer is cut
// to its buffer-full start; literals ({n}) inside it are skipped, so the
// line is the whole response.
func (c *idleConn) line() ([]byte, error) {
	for {
		seg, err := c.br.ReadSlice('\n')
		head := seg
		for errors.Is(err, bufio.ErrBufferFull) || err == nil && literalSize(seg) >= 0 {
			if errors.Is(err, bufio.ErrBufferFull) {
				head = bytes.Clone(head) // ReadSlice reuses the buffer
			} else if _, err = c.br.Discard(literalSize(seg)); err != nil {
				return nil, err
			}
			seg, err = c.br.ReadSlice('\n')
		}
		if err != nil {
			return nil, err
		}
		if head = bytes.TrimRight(head, "\r\n"); len(head) > 0 {
			return head, nil
		}
	}
}

// literalSize is n when seg ends in a literal's announcement "{n}\r\n" or
// "{n+}\r\n" (RFC 9051 §4.3, RFC 7888), else -1.
func literalSize(seg []byte) int {
	seg = bytes.TrimRight(seg, "\r\n")
	if len(seg) < 3 || seg[len(seg)-1] != '}' {
		return -1
	}
	open := bytes.LastIndexByte(seg, '{')
	if open < 0 {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSuffix(string(seg[open+1:len(seg)-1]), "+"))
	if err != nil || n < 0 || n > maxLiteral {
		return -1
	}
	return n
}

// quoted is s as an IMAP quoted string (RFC 9051 §4.3), or false if s holds
// a character a quoted string cannot carry.
func quoted(s string) (string, bool) {
	if strings.ContainsAny(s, "\r\n\x00") {
		return "", false
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`, true
}

// trimLine is a server line for an error message: at most 200 bytes.
func trimLine(b []byte) string {
	if len(b) > 200 {
		b = b[:200]
	}
	return string(b)
}
