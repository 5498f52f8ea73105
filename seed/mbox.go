package seed

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// An mbox file is messages, each after a separator line that starts with
// "From " (RFC 4155). A writer quotes body lines that would look like one:
// mboxo writes ">From " for "From ", which cannot be undone exactly;
// mboxrd writes one more '>' before any run of '>' followed by "From ", and
// a reader removes one. MboxReader removes one '>' from every line that
// matches ">+From ", which undoes mboxrd and mboxo alike (a mboxo message
// that held ">From " itself comes back as "From "). The blank line a writer
// puts between messages is not part of either. Line endings become CRLF,
// as IMAP wants (RFC 9051 §2.2).

// DefaultMaxMessage is the default cap on one message of an mbox, in bytes
// as stored in the file.
const DefaultMaxMessage = 64 << 20

var fromLine = []byte("From ")

// MboxReader reads the messages of an mbox one at a time, holding at most
// one message (up to its cap) in memory.
type MboxReader struct {
	br      *bufio.Reader
	max     int
	off     int64  // bytes consumed from the file
	n       int    // messages returned
	started bool   // the first separator line has been read
	eof     bool   // the file has ended
	buf     []byte // the raw message being read
	start   int64  // the offset of the last message returned
}

// NewMboxReader returns a reader of r whose messages may hold at most
// maxMessage bytes as stored (0: DefaultMaxMessage). It does no I/O.
func NewMboxReader(r io.Reader, maxMessage int) *MboxReader {
	if maxMessage <= 0 {
		maxMessage = DefaultMaxMessage
	}
	return &MboxReader{br: bufio.NewReaderSize(r, 64<<10), max: maxMessage}
}

// Next returns the next message, with CRLF line endings and unquoted, or
// io.EOF after the last. A message larger than the cap is
// ErrMessageTooLarge; a file that does not start with a "From " line is
// ErrNotMbox. The returned slice is the caller's.
func (m *MboxReader) Next() ([]byte, error) {
	if !m.started {
		if err := m.begin(); err != nil {
			return nil, err
		}
	}
	if m.eof {
		return nil, io.EOF
	}
	for {
		m.start, m.buf = m.off, m.buf[:0]
		if err := m.readMessage(); err != nil {
			return nil, err
		}
		if len(m.buf) > 0 {
			m.n++
			return Decode(m.buf), nil
		}
		if m.eof {
			return nil, io.EOF // an empty message is skipped
		}
	}
}

// Span returns where the raw form of the last message Next returned lies in
// the file: its offset and length in bytes (what Decode turns back into
// the message).
func (m *MboxReader) Span() (offset int64, length int) { return m.start, len(m.buf) }

// begin reads the first separator line; an empty file has no message.
func (m *MboxReader) begin() error {
	m.started = true
	head, err := m.br.Peek(len(fromLine))
	switch {
	case len(head) == 0 && err == io.EOF:
		m.eof = true
		return nil
	case !bytes.Equal(head, fromLine):
		return ErrNotMbox
	}
	return m.skipLine()
}

// readMessage reads lines into m.buf up to the next separator line (which
// it consumes) or the end of the file.
func (m *MboxReader) readMessage() error {
	atStart := true
	for {
		chunk, err := m.br.ReadSlice('\n')
		m.off += int64(len(chunk))
		if atStart && bytes.HasPrefix(chunk, fromLine) {
			m.buf = trimSeparatorBlank(m.buf)
			if chunk[len(chunk)-1] == '\n' {
				return nil
			}
			return m.skipLine()
		}
		if len(m.buf)+len(chunk) > m.max {
			return fmt.Errorf("%w: message %d, at byte %d of the mbox, is over %d bytes", ErrMessageTooLarge, m.n+1, m.start, m.max)
		}
		m.buf = append(m.buf, chunk...)
		atStart = len(chunk) > 0 && chunk[len(chunk)-1] == '\n'
		switch {
		case err == io.EOF:
			m.eof, m.buf = true, trimSeparatorBlank(m.buf)
			return nil
		case err != nil && !errors.Is(err, bufio.ErrBufferFull):
			return fmt.Errorf("seed: read mbox: %w", err)
		}
	}
}

// skipLine consumes the rest of a line, however long.
func (m *MboxReader) skipLine() error {
	for {
		chunk, err := m.br.ReadSlice('\n')
		m.off += int64(len(chunk))
		switch {
		case err == io.EOF:
			m.eof = true
			return nil
		case err == nil:
			return nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return fmt.Errorf("seed: read mbox: %w", err)
		}
	}
}

// trimSeparatorBlank drops the one blank line a writer puts before a
// separator line.
func trimSeparatorBlank(b []byte) []byte {
	switch {
	case bytes.HasSuffix(b, []byte("\r\n\r\n")):
		return b[:len(b)-2]
	case bytes.HasSuffix(b, []byte("\n\n")):
		return b[:len(b)-1]
	case bytes.Equal(b, []byte("\r\n")), bytes.Equal(b, []byte("\n")):
		return b[:0]
	}
	return b
}

// Decode turns a message as stored in an mbox into the message: one '>'
// removed from each line matching ">+From ", and every line ending CRLF
// (a last line without a newline keeps none). It does no I/O.
func Decode(raw []byte) []byte {
	out := make([]byte, 0, len(raw)+len(raw)/32)
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line = raw[:i+1]
		}
		raw = raw[len(line):]
		if quotedFrom(line) {
			line = line[1:]
		}
		if body, ok := bytes.CutSuffix(line, []byte("\n")); ok {
			out = append(append(out, bytes.TrimSuffix(body, []byte("\r"))...), "\r\n"...)
			continue
		}
		out = append(out, line...)
	}
	return out
}

// quotedFrom reports whether line is ">+From ".
func quotedFrom(line []byte) bool {
	rest := bytes.TrimLeft(line, ">")
	return len(rest) < len(line) && bytes.HasPrefix(rest, fromLine)
}
