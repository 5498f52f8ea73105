package embedded_test

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/imapload/imapload/embedded"
)

// rawConn speaks IMAP by hand, to send what imapclient never would.
type rawConn struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
}

func dialRaw(t *testing.T, s *embedded.IMAP) *rawConn {
	t.Helper()
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatalf("net.Dial() error = %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	rc := &rawConn{t: t, conn: conn, r: bufio.NewReader(conn)}
	rc.expect("* OK")
	return rc
}

func (rc *rawConn) send(s string) {
	rc.t.Helper()
	if _, err := rc.conn.Write([]byte(s)); err != nil {
		rc.t.Fatalf("Write(%q) error = %v", s, err)
	}
}

// expect reads lines until one starts with prefix.
func (rc *rawConn) expect(prefix string) string {
	rc.t.Helper()
	rc.conn.SetReadDeadline(time.Now().Add(waitLong))
	for {
		line, err := rc.r.ReadString('\n')
		if err != nil {
			rc.t.Fatalf("waiting for %q: ReadString() error = %v", prefix, err)
		}
		if strings.HasPrefix(line, prefix) {
			return line
		}
	}
}

func TestIMAPPipelinedCommands(t *testing.T) {
	s := startIMAP(t, &embedded.IMAPOptions{Workers: 1, ServiceTime: time.Millisecond})
	rc := dialRaw(t, s)
	rc.send("a LOGIN user1 secret\r\nb SELECT INBOX\r\nc NOOP\r\nd LOGOUT\r\n")
	for _, tag := range []string{"a OK", "b OK", "c OK", "d OK"} {
		rc.expect(tag)
	}
	if got := s.Stats().Commands; got != 4 {
		t.Errorf("Stats().Commands = %d, want 4", got)
	}
}

func TestIMAPRefusedLiteral(t *testing.T) {
	s := startIMAP(t, nil)
	rc := dialRaw(t, s)
	// The server refuses a 5000-byte LOGIN literal instead of sending "+"
	// (go-imap then discards the next line, b). The lines after the refusal
	// are new commands, not literal data: both NOOPs are counted and gated.
	rc.send("a LOGIN user1 {5000}\r\n")
	rc.send("b NOOP\r\n")
	rc.expect("a BAD")
	rc.send("c NOOP\r\n")
	rc.expect("c OK")
	if got := s.Stats().CommandsByName["NOOP"]; got != 2 {
		t.Errorf("Stats().CommandsByName[NOOP] = %d, want 2", got)
	}
}

func TestIMAPSyncLiteralAndIdle(t *testing.T) {
	s := startIMAP(t, &embedded.IMAPOptions{Workers: 2, ServiceTime: time.Millisecond})
	rc := dialRaw(t, s)
	rc.send("a LOGIN {5}\r\n")
	rc.expect("+")
	rc.send("user1 {6}\r\n")
	rc.expect("+")
	rc.send("secret\r\n")
	rc.expect("a OK")
	rc.send("b SELECT INBOX\r\n")
	rc.expect("b OK")

	body := bytes.Repeat([]byte("x"), 10000) // above 4096: a synchronizing literal
	msg := "Subject: big\r\n\r\n" + string(body) + "\r\n"
	rc.send("c APPEND INBOX {" + strconv.Itoa(len(msg)) + "}\r\n")
	rc.expect("+")
	rc.send(msg + "\r\n")
	rc.expect("c OK")

	rc.send("d IDLE\r\n")
	rc.expect("+")
	rc.send("DONE\r\n")
	rc.expect("d OK")
	rc.send("e LOGOUT\r\n")
	rc.expect("e OK")

	want := map[string]uint64{"LOGIN": 1, "SELECT": 1, "APPEND": 1, "IDLE": 1, "LOGOUT": 1}
	st := s.Stats()
	for name, n := range want {
		if st.CommandsByName[name] != n {
			t.Errorf("Stats().CommandsByName[%s] = %d, want %d (all: %v)", name, st.CommandsByName[name], n, st.CommandsByName)
		}
	}
	if st.Commands != 5 {
		t.Errorf("Stats().Commands = %d, want 5", st.Commands)
	}
}

func TestIMAPGarbageInput(t *testing.T) {
	s := startIMAP(t, nil)
	rc := dialRaw(t, s)
	rc.send("\x00\x01 \xff\xfe garbage {99999999999999999999}\r\n")
	rc.conn.SetReadDeadline(time.Now().Add(waitLong))
	if _, err := io.Copy(io.Discard, rc.r); err != nil {
		t.Fatalf("reading until the server hangs up: %v", err)
	}
	c := login(t, s, "user1") // the server is unharmed
	if _, err := c.Status("INBOX", &imap.StatusOptions{NumMessages: true}).Wait(); err != nil {
		t.Errorf("Status() error = %v", err)
	}
	if got := s.Stats().CommandsByName["OTHER"]; got != 1 {
		t.Errorf("Stats().CommandsByName[OTHER] = %d, want 1", got)
	}
}
