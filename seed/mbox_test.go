package seed

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// readAll returns every message of an mbox, or the first error.
func readAll(data string, maxMessage int) ([]string, error) {
	r := NewMboxReader(strings.NewReader(data), maxMessage)
	var out []string
	for {
		m, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, string(m))
	}
}

func TestMboxReader(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
		err      error
	}{
		{name: "empty", in: ""},
		{name: "one, LF", in: "From a@b Mon Jan  1 00:00:00 2024\nSubject: x\n\nhi\n\n",
			want: []string{"Subject: x\r\n\r\nhi\r\n"}},
		{name: "two, CRLF", in: "From a\r\nA: 1\r\n\r\none\r\n\r\nFrom b\r\nB: 2\r\n\r\ntwo\r\n",
			want: []string{"A: 1\r\n\r\none\r\n", "B: 2\r\n\r\ntwo\r\n"}},
		{name: "mboxrd unquoting", in: "From a\nS: q\n\n>From me\n>>From you\n> From not\nFrom\n",
			want: []string{"S: q\r\n\r\nFrom me\r\n>From you\r\n> From not\r\nFrom\r\n"}},
		{name: "no blank line before the separator", in: "From a\nX: 1\n\nx\nFrom b\nY: 2\n\ny",
			want: []string{"X: 1\r\n\r\nx\r\n", "Y: 2\r\n\r\ny"}},
		{name: "empty messages skipped", in: "From a\n\nFrom b\nZ: 1\n\nz\n\nFrom c\n",
			want: []string{"Z: 1\r\n\r\nz\r\n"}},
		{name: "not an mbox", in: "Subject: x\n\nhi\n", err: ErrNotMbox},
		{name: "too large", in: "From a\nS: 1\n\n" + strings.Repeat("y", 100) + "\n", err: ErrMessageTooLarge},
		{name: "too large one line", in: "From a\n" + strings.Repeat("y", 200_000), err: ErrMessageTooLarge},
		{name: "long separator line", in: "From " + strings.Repeat("x", 100_000) + "\nS: 1\n\nb\n",
			want: []string{"S: 1\r\n\r\nb\r\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(tt.in, 64)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Next() error = %v, want %v", err, tt.err)
			}
			if err == nil && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("messages = %q\nwant %q", got, tt.want)
			}
		})
	}
}

// writeMbox writes msgs (CRLF messages) as an mboxrd file with LF lines, as
// mail clients write them, and returns its path.
func writeMbox(t *testing.T, msgs [][]byte) string {
	t.Helper()
	var b bytes.Buffer
	for _, m := range msgs {
		b.WriteString("From seeder@example.org Mon Jan  1 00:00:00 2024\n")
		for _, line := range strings.SplitAfter(strings.ReplaceAll(string(m), "\r\n", "\n"), "\n") {
			if quotedFrom([]byte(">" + line)) { // mboxrd: one more '>' before >*From
				b.WriteByte('>')
			}
			b.WriteString(line)
		}
		b.WriteString("\n")
	}
	path := filepath.Join(t.TempDir(), "test.mbox")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestMboxSourceRoundTrip: messages written as mboxrd come back byte for
// byte, cycled when a folder needs more than the file holds.
func TestMboxSourceRoundTrip(t *testing.T) {
	msgs := [][]byte{
		[]byte("Subject: one\r\nDate: Mon, 01 Jan 2024 10:00:00 +0000\r\n\r\nFrom the start\r\n>From quoted\r\n"),
		[]byte("Subject: two\r\n\r\nbody\r\n\r\n\r\n"),
		[]byte("Subject: three\r\n\r\n>>From deep\r\nend\r\n"),
	}
	src, err := OpenMbox(writeMbox(t, msgs), 0)
	if err != nil {
		t.Fatalf("OpenMbox() error = %v", err)
	}
	defer src.Close()
	if src.Len() != len(msgs) {
		t.Fatalf("Len() = %d, want %d", src.Len(), len(msgs))
	}
	for i := range 7 {
		m, err := src.Message(Key{Account: "u", Folder: "INBOX", Index: i})
		if err != nil || !bytes.Equal(m.Body, msgs[i%len(msgs)]) {
			t.Errorf("Message(%d) = %q, %v; want %q", i, m.Body, err, msgs[i%len(msgs)])
		}
	}
	if m, _ := src.Message(Key{}); m.Date.IsZero() {
		t.Error("message 0 has no date from its Date header")
	}
}

func TestOpenMboxErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	notMbox := filepath.Join(dir, "eml")
	os.WriteFile(empty, nil, 0o600)
	os.WriteFile(notMbox, []byte("Subject: x\n\nhi\n"), 0o600)
	for _, tt := range []struct {
		path string
		err  error
	}{{empty, ErrEmptyMbox}, {notMbox, ErrNotMbox}, {filepath.Join(dir, "missing"), os.ErrNotExist}} {
		if _, err := OpenMbox(tt.path, 0); !errors.Is(err, tt.err) {
			t.Errorf("OpenMbox(%s) error = %v, want %v", filepath.Base(tt.path), err, tt.err)
		}
	}
}

// FuzzMbox: the reader never panics, never returns a message over its cap
// (twice the stored bytes at most, for CRLF), fails only with its own
// errors, and its spans decode to the messages it returned.
func FuzzMbox(f *testing.F) {
	for _, s := range []string{"", "From a\nS: 1\n\nx\n\nFrom b\n>From y\n", "From \r\n\r\nFrom \n", "x", "From a\n" + strings.Repeat("z", 300)} {
		f.Add([]byte(s))
	}
	const maxMessage = 256
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewMboxReader(bytes.NewReader(data), maxMessage)
		for range len(data) + 1 {
			m, err := r.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				if !errors.Is(err, ErrNotMbox) && !errors.Is(err, ErrMessageTooLarge) {
					t.Fatalf("Next() error = %v", err)
				}
				return
			}
			off, n := r.Span()
			if n > maxMessage || len(m) > 2*maxMessage || len(m) == 0 {
				t.Fatalf("message of %d bytes (%d stored), cap %d", len(m), n, maxMessage)
			}
			if got := Decode(data[off : off+int64(n)]); !bytes.Equal(got, m) {
				t.Fatalf("Decode(span %d+%d) = %q, Next() = %q", off, n, got, m)
			}
		}
		t.Fatal("Next() did not end")
	})
}
