package seed

import (
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"
	"testing"
	"time"
)

var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func testGenerator(t *testing.T, sizes string) *Generator {
	t.Helper()
	tab, err := ParseSizes(sizes)
	if err != nil {
		t.Fatal(err)
	}
	return &Generator{Sizes: tab, Seed: 42, Now: testNow, Days: 30}
}

// TestGeneratorMessages: every message is exactly its drawn size, valid
// RFC 5322 with CRLF lines under 1000 bytes, dated within the last Days,
// and the large ones are multipart/mixed with a base64 attachment that
// decodes.
func TestGeneratorMessages(t *testing.T) {
	g := testGenerator(t, "1k-4k:1,40k-200k:1")
	multiparts := 0
	for i := range 40 {
		k := Key{Account: "user3", Folder: "Archive", Index: i}
		m, err := g.Message(k)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Body) != g.Size(k) {
			t.Errorf("message %d: %d bytes, drawn size %d", i, len(m.Body), g.Size(k))
		}
		checkLines(t, m.Body)
		msg, err := mail.ReadMessage(bytes.NewReader(m.Body))
		if err != nil {
			t.Fatalf("message %d: mail.ReadMessage() error = %v", i, err)
		}
		checkHeaders(t, msg, m.Date)
		if len(m.Body) >= AttachmentFrom {
			multiparts++
			checkAttachment(t, msg)
		}
	}
	if multiparts == 0 {
		t.Error("no message with an attachment among 40")
	}
}

func checkLines(t *testing.T, b []byte) {
	t.Helper()
	for i, line := range bytes.SplitAfter(b, []byte("\n")) {
		switch {
		case len(line) > 998:
			t.Fatalf("line %d: %d bytes", i+1, len(line))
		case len(line) > 0 && !bytes.HasSuffix(line, []byte("\r\n")):
			t.Fatalf("line %d %q does not end CRLF", i+1, line)
		case bytes.Count(line, []byte("\r")) != 1 && len(line) > 0:
			t.Fatalf("line %d %q has a bare CR", i+1, line)
		}
	}
}

func checkHeaders(t *testing.T, msg *mail.Message, internal time.Time) {
	t.Helper()
	date, err := msg.Header.Date()
	if err != nil || !date.Equal(internal) || date.After(testNow) || date.Before(testNow.AddDate(0, 0, -30)) {
		t.Errorf("Date %v (%v), INTERNALDATE %v: want the same, within 30 days before %v", date, err, internal, testNow)
	}
	for _, h := range []string{"From", "To", "Subject", "Message-Id", "Mime-Version"} {
		if msg.Header.Get(h) == "" {
			t.Errorf("no %s header", h)
		}
	}
	if _, err := msg.Header.AddressList("From"); err != nil {
		t.Errorf("From %q: %v", msg.Header.Get("From"), err)
	}
}

func checkAttachment(t *testing.T, msg *mail.Message) {
	t.Helper()
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/mixed" {
		t.Fatalf("Content-Type %q (%v), want multipart/mixed", msg.Header.Get("Content-Type"), err)
	}
	r := multipart.NewReader(msg.Body, params["boundary"])
	var parts []string
	for {
		p, err := r.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("part %d: %v", len(parts)+1, err)
		}
		body, _ := io.ReadAll(p)
		if p.Header.Get("Content-Transfer-Encoding") == "base64" {
			raw, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(string(body), "\r\n", ""))
			if err != nil || len(raw) == 0 {
				t.Errorf("attachment: %d bytes decoded, error %v", len(raw), err)
			}
		}
		parts = append(parts, p.Header.Get("Content-Type"))
	}
	if len(parts) != 2 || !strings.HasPrefix(parts[0], "text/plain") {
		t.Errorf("parts %q, want text/plain and an attachment", parts)
	}
}

// TestGeneratorDeterministic: a key's message is the same every time, and
// another key's differs.
func TestGeneratorDeterministic(t *testing.T) {
	g := testGenerator(t, DefaultSizes)
	k := Key{Account: "a", Folder: "INBOX", Index: 3}
	m1, _ := g.Message(k)
	m2, _ := g.Message(k)
	k.Index++
	m3, _ := g.Message(k)
	if !bytes.Equal(m1.Body, m2.Body) || !m1.Date.Equal(m2.Date) {
		t.Error("the same key gave two messages")
	}
	if bytes.Equal(m1.Body, m3.Body) {
		t.Error("two keys gave one message")
	}
}
