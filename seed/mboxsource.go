package seed

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"os"
	"time"
)

// MboxSource supplies the messages of an mbox file: the folder's message
// k is the file's message k modulo their number, so folders fill in the
// file's order and cycle through it when they need more. It indexes the
// file once (16 bytes per message) and reads each message from the file
// when asked, so memory stays bounded by the largest message, not the file.
type MboxSource struct {
	f     *os.File
	spans []span
	bytes int64 // of the messages, as stored
}

type span struct {
	off int64
	n   int
}

var _ Source = (*MboxSource)(nil)

// OpenMbox opens and indexes the mbox at path; its messages may hold at
// most maxMessage bytes (0: DefaultMaxMessage). The caller must Close it.
func OpenMbox(path string, maxMessage int) (*MboxSource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	s := &MboxSource{f: f}
	if err := s.index(maxMessage); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func (s *MboxSource) index(maxMessage int) error {
	r := NewMboxReader(s.f, maxMessage)
	for {
		_, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		off, n := r.Span()
		s.spans = append(s.spans, span{off, n})
		s.bytes += int64(n)
	}
	if len(s.spans) == 0 {
		return ErrEmptyMbox
	}
	return nil
}

// Len returns the number of messages in the file.
func (s *MboxSource) Len() int { return len(s.spans) }

// Bytes returns the size of the messages as stored in the file.
func (s *MboxSource) Bytes() int64 { return s.bytes }

// Close closes the file.
func (s *MboxSource) Close() error { return s.f.Close() }

// Message returns the file's message k.Index modulo Len, dated by its
// Date header (zero if it has none that parses), with no flags.
func (s *MboxSource) Message(k Key) (Message, error) {
	sp := s.spans[k.Index%len(s.spans)]
	raw := make([]byte, sp.n)
	if _, err := s.f.ReadAt(raw, sp.off); err != nil {
		return Message{}, fmt.Errorf("seed: read mbox message at byte %d: %w", sp.off, err)
	}
	body := Decode(raw)
	return Message{Body: body, Date: headerDate(body)}, nil
}

// headerDate returns the message's Date header, zero if it has none that
// parses.
func headerDate(msg []byte) time.Time {
	end := bytes.Index(msg, []byte("\r\n\r\n"))
	if end < 0 {
		return time.Time{}
	}
	m, err := mail.ReadMessage(bytes.NewReader(msg[:end+4]))
	if err != nil {
		return time.Time{}
	}
	t, err := m.Header.Date()
	if err != nil {
		return time.Time{}
	}
	return t
}
