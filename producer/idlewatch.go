package producer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"time"
)

// What a held connection does when the step delivers mail: it learns
// INBOX's UIDNEXT at SELECT, reads what the server pushes while it idles,
// and on an EXISTS (RFC 9051 §7.4.1) ends IDLE, fetches the Message-ID of
// each message from UIDNEXT on (UID FETCH, §6.4.8) and idles again, as a
// phone's mail client fetches the headers of new mail.

// fetchNewCmd fetches the Message-ID header of every message from a UID on.
const fetchNewCmd = " (UID BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])"

// existsAt is an EXISTS read: the mailbox's new size and when it came.
type existsAt struct {
	n  uint64
	at time.Time
}

// selectInbox selects INBOX and notes its UIDNEXT (RFC 9051 §7.1).
func (c *idleConn) selectInbox() error {
	if err := c.send("SELECT INBOX"); err != nil {
		return err
	}
	tag := "h" + strconv.Itoa(c.tag) + " "
	for {
		line, err := c.line()
		if err != nil {
			return err
		}
		if v, ok := numberAfter(line, "[UIDNEXT "); ok {
			c.uidNext = v
		}
		if rest, ok := bytes.CutPrefix(line, []byte(tag)); ok {
			if bytes.HasPrefix(rest, []byte("OK")) {
				return nil
			}
			return errors.New("SELECT: " + trimLine(rest))
		}
	}
}

// waitExists idles like wait, but returns the first EXISTS the server
// pushes (its zero value at the deadline or when woken).
func (c *idleConn) waitExists(ctx context.Context, until time.Time) (existsAt, error) {
	if c.br == nil {
		c.br = lineBufs.Get().(*bufio.Reader)
		c.br.Reset(c.conn)
	}
	c.conn.SetDeadline(until)
	if ctx.Err() != nil {
		return existsAt{}, nil
	}
	for {
		line, err := c.line()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return existsAt{}, nil
		}
		if err != nil {
			return existsAt{}, c.fail(err)
		}
		if n, ok := existsCount(line); ok {
			return existsAt{n: n, at: time.Now()}, nil
		}
		if bytes.HasPrefix(line, []byte("* BYE")) {
			return existsAt{}, c.fail(errBye)
		}
	}
}

// fetchNew ends IDLE, fetches the Message-IDs of the messages from UIDNEXT
// on, hands each to seen with the time of the EXISTS that announced it,
// and idles again, all within timeout.
func (c *idleConn) fetchNew(first existsAt, timeout time.Duration, seen func(id string, at time.Time)) error {
	c.begin(timeout)
	events := []existsAt{first}
	if _, err := io.WriteString(c.conn, "DONE\r\n"); err != nil {
		return c.fail(err)
	}
	if err := c.done("IDLE"); err != nil {
		return c.fail(err)
	}
	if err := c.send("UID FETCH " + strconv.FormatUint(c.uidNext, 10) + ":*" + fetchNewCmd); err != nil {
		return c.fail(err)
	}
	tag := []byte("h" + strconv.Itoa(c.tag) + " ")
	for {
		resp, err := c.response()
		if err != nil {
			return c.fail(err)
		}
		if rest, ok := bytes.CutPrefix(resp, tag); ok {
			if !bytes.HasPrefix(rest, []byte("OK")) {
				return c.fail(errors.New("UID FETCH: " + trimLine(rest)))
			}
			break
		}
		if n, ok := existsCount(resp); ok {
			events = append(events, existsAt{n: n, at: time.Now()})
			continue
		}
		c.fetched(resp, events, seen)
	}
	if err := c.idle(); err != nil {
		return c.fail(err)
	}
	return nil
}

// fetched hands on the Message-ID of one FETCH response of a message at or
// past UIDNEXT (a UID range n:* also returns the last message when n is
// past it), and moves UIDNEXT past it.
func (c *idleConn) fetched(resp []byte, events []existsAt, seen func(string, time.Time)) {
	seq, ok := numberAfter(resp, "* ")
	uid, okU := numberAfter(resp, "UID ")
	if !ok || !okU || uid < c.uidNext || !bytes.Contains(resp, []byte(" FETCH ")) {
		return
	}
	c.uidNext = uid + 1
	at := time.Now()
	for _, e := range events { // the first EXISTS that counted this message
		if e.n >= seq {
			at = e.at
			break
		}
	}
	if id := messageID(resp); id != "" {
		seen(id, at)
	}
}

// response reads one whole response: its lines and the literals in them
// (at most maxLiteral each), as one byte slice of its own.
func (c *idleConn) response() ([]byte, error) {
	var out []byte
	for {
		seg, err := c.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			out = append(out, seg...)
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, seg...)
		n := literalSize(out)
		if n < 0 {
			return bytes.TrimRight(out, "\r\n"), nil
		}
		lit := make([]byte, n)
		if _, err := io.ReadFull(c.br, lit); err != nil {
			return nil, err
		}
		out = append(out, lit...)
	}
}

// existsCount is n of an untagged "* n EXISTS".
func existsCount(line []byte) (uint64, bool) {
	rest, ok := bytes.CutPrefix(line, []byte("* "))
	if !ok {
		return 0, false
	}
	num, word, ok := bytes.Cut(rest, []byte(" "))
	if !ok || !bytes.EqualFold(bytes.TrimSpace(word), []byte("EXISTS")) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(num), 10, 64)
	return n, err == nil
}

// numberAfter is the decimal number right after the first prefix in b.
func numberAfter(b []byte, prefix string) (uint64, bool) {
	i := bytes.Index(b, []byte(prefix))
	if i < 0 {
		return 0, false
	}
	rest := b[i+len(prefix):]
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	n, err := strconv.ParseUint(string(rest[:end]), 10, 64)
	return n, err == nil
}

// messageID is the <…> of the Message-ID header in a fetched header block,
// "" without one.
func messageID(resp []byte) string {
	i := bytes.Index(bytes.ToLower(resp), []byte("message-id:"))
	if i < 0 {
		return ""
	}
	rest := resp[i:]
	open, end := bytes.IndexByte(rest, '<'), bytes.IndexByte(rest, '>')
	if open < 0 || end < open {
		return ""
	}
	return string(rest[open+1 : end])
}
