package producer

import (
	"bytes"
	"math/rand/v2"
	"net/mail"
	"testing"
	"time"
)

func TestNewMessage(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	raw := newMessage("user 1<x>", "p1", 7, now, rand.New(rand.NewPCG(1, 2)))
	if len(raw) < 512 || len(raw) > 4096 {
		t.Errorf("newMessage() is %d bytes, want a small message (512–4096)", len(raw))
	}
	if bytes.Contains(bytes.ReplaceAll(raw, []byte("\r\n"), nil), []byte("\n")) {
		t.Errorf("newMessage() has a bare LF, want CRLF line ends only")
	}
	for i, c := range raw {
		if c > 0x7e || (c < 0x20 && c != '\r' && c != '\n') {
			t.Fatalf("newMessage() byte %d = %#x, want 7-bit printable ASCII", i, c)
		}
	}
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("mail.ReadMessage(newMessage()) error = %v", err)
	}
	for _, h := range []string{"From", "To", "Subject", "Date", "Message-Id"} {
		if m.Header.Get(h) == "" {
			t.Errorf("newMessage() header %s missing", h)
		}
	}
	if _, err := m.Header.AddressList("To"); err != nil {
		t.Errorf("newMessage() To: %q does not parse: %v", m.Header.Get("To"), err)
	}
	again := newMessage("user 1<x>", "p1", 7, now, rand.New(rand.NewPCG(1, 2)))
	if !bytes.Equal(raw, again) {
		t.Errorf("newMessage() differs for the same inputs")
	}
	other := newMessage("user 1<x>", "p1", 7, now, rand.New(rand.NewPCG(1, 3)))
	if bytes.Equal(raw, other) {
		t.Errorf("newMessage() is the same for different random sources, want unique messages")
	}
}
