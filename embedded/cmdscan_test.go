package embedded

import (
	"strings"
	"testing"
)

// segment is one step of the scanner: the released bytes and, for a
// command start, its name.
type segment struct {
	text string
	name string
}

func scanAll(s *cmdScanner, input string) []segment {
	var out []segment
	buf := []byte(input)
	for len(buf) > 0 {
		n, name, start := s.step(buf)
		if n == 0 {
			break
		}
		seg := segment{text: string(buf[:n])}
		if start {
			seg.name = name
		}
		out = append(out, seg)
		buf = buf[n:]
	}
	return out
}

func TestCmdScannerStep(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []segment
	}{
		{name: "one command", input: "a1 NOOP\r\n", want: []segment{{"a1 NOOP\r\n", "NOOP"}}},
		{name: "lower case and args", input: "x select INBOX\r\n", want: []segment{{"x select INBOX\r\n", "SELECT"}}},
		{name: "uid subcommand", input: "t UID fetch 1:* (FLAGS)\r\n",
			want: []segment{{"t UID fetch 1:* (FLAGS)\r\n", "UID FETCH"}}},
		{name: "pipelined", input: "a NOOP\r\nb LOGOUT\r\n",
			want: []segment{{"a NOOP\r\n", "NOOP"}, {"b LOGOUT\r\n", "LOGOUT"}}},
		{name: "incomplete line waits", input: "a NOO", want: nil},
		{name: "non-sync literal is one command",
			input: "a APPEND INBOX {5+}\r\nhello\r\nb NOOP\r\n",
			want:  []segment{{"a APPEND INBOX {5+}\r\n", "APPEND"}, {"hello", ""}, {"\r\n", ""}, {"b NOOP\r\n", "NOOP"}}},
		{name: "literal holding a newline",
			input: "a LOGIN {3}\r\nx\ny {2}\r\npw\r\n",
			want:  []segment{{"a LOGIN {3}\r\n", "LOGIN"}, {"x\ny", ""}, {" {2}\r\n", ""}, {"pw", ""}, {"\r\n", ""}}},
		{name: "IDLE DONE is not a command", input: "a IDLE\r\nDONE\r\n",
			want: []segment{{"a IDLE\r\n", "IDLE"}, {"DONE\r\n", ""}}},
		{name: "SASL response is not a command", input: "AGZvbwBiYXI=\r\n", want: []segment{{"AGZvbwBiYXI=\r\n", ""}}},
		{name: "bare LF", input: "a NOOP\n", want: []segment{{"a NOOP\n", "NOOP"}}},
		{name: "bad literal is plain text", input: "a X {-1}\r\nb NOOP\r\n",
			want: []segment{{"a X {-1}\r\n", "X"}, {"b NOOP\r\n", "NOOP"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s cmdScanner
			got := scanAll(&s, tt.input)
			if len(got) != len(tt.want) {
				t.Fatalf("step() segments = %q, want %q", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("step() segment %d = %q, want %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestCmdScannerLongLinePassesThrough(t *testing.T) {
	var s cmdScanner
	long := strings.Repeat("x", maxLine)
	if n, _, start := s.step([]byte(long)); n != maxLine || start {
		t.Errorf("step(%d bytes without newline) = %d, start %v; want %d, false", maxLine, n, start, maxLine)
	}
}

func TestCmdScannerCancelLiteral(t *testing.T) {
	var s cmdScanner
	s.step([]byte("a LOGIN {5000}\r\n"))
	if !s.awaitingSync() {
		t.Fatal("awaitingSync() = false after a synchronizing literal")
	}
	s.cancelLiteral()
	if _, name, start := s.step([]byte("b NOOP\r\n")); !start || name != "NOOP" {
		t.Errorf("step() after cancelLiteral = %q, %v; want NOOP, true", name, start)
	}
}

func TestLiteralSuffix(t *testing.T) {
	tests := []struct {
		line string
		size int64
		sync bool
	}{
		{"a APPEND INBOX {12}\r\n", 12, true},
		{"a APPEND INBOX ~{12+}\r\n", 12, false},
		{"a LOGIN u p\r\n", 0, false},
		{"a X {}\r\n", 0, false},
		{"a X {+}\r\n", 0, false},
		{"a X {99999999999999999999}\r\n", 0, false},
		{"}\r\n", 0, false},
	}
	for _, tt := range tests {
		size, sync := literalSuffix([]byte(tt.line))
		if size != tt.size || (size > 0 && sync != tt.sync) {
			t.Errorf("literalSuffix(%q) = %d, %v; want %d, %v", tt.line, size, sync, tt.size, tt.sync)
		}
	}
}

func FuzzCmdScanner(f *testing.F) {
	f.Add([]byte("a APPEND INBOX {5+}\r\nhello\r\nb NOOP\r\n"))
	f.Add([]byte("a LOGIN {3}\r\nx\ny {2}\r\npw\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var s cmdScanner
		total := 0
		for rest := b; len(rest) > 0; {
			n, _, _ := s.step(rest)
			if n < 0 || n > len(rest) {
				t.Fatalf("step() = %d with %d bytes", n, len(rest))
			}
			if n == 0 {
				break
			}
			total += n
			rest = rest[n:]
		}
		if total > len(b) {
			t.Fatalf("released %d of %d bytes", total, len(b))
		}
	})
}
