package embedded_test

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
)

// TestIMAPRefuseSelect: RefuseSelect 1 refuses every SELECT and nothing
// else; RefuseList 1 every LIST.
func TestIMAPRefuseSelect(t *testing.T) {
	s := startIMAP(t, &embedded.IMAPOptions{RefuseSelect: 1, RefuseList: 1})
	c := login(t, s, "user1")
	for range 3 {
		if _, err := c.Select("INBOX", nil).Wait(); err == nil || !strings.Contains(err.Error(), "injected fault") {
			t.Fatalf("Select() error = %v, want NO [SERVERBUG] injected fault", err)
		}
	}
	if _, err := c.List("", "*", nil).Collect(); err == nil || !strings.Contains(err.Error(), "injected fault") {
		t.Errorf("List() error = %v, want NO [SERVERBUG] injected fault", err)
	}
	if _, err := c.Status("INBOX", nil).Wait(); err != nil {
		t.Errorf("Status() error = %v, want none (only SELECT and LIST are refused)", err)
	}
}

// TestIMAPNoGreeting: the server accepts the connection and sends nothing;
// closing the server ends the wait.
func TestIMAPNoGreeting(t *testing.T) {
	s := startIMAP(t, &embedded.IMAPOptions{NoGreeting: true})
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if line, err := bufio.NewReader(conn).ReadString('\n'); err == nil {
		t.Fatalf("read %q, want no greeting", line)
	} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Fatalf("read error = %v, want a timeout (the connection stays open, silent)", err)
	}
	s.Close()
	_ = conn.SetReadDeadline(time.Now().Add(waitLong))
	if _, err := bufio.NewReader(conn).ReadString('\n'); err == nil {
		t.Errorf("after Close: read succeeded, want the connection closed")
	}
}

// TestIMAPLoginDelay: a LOGIN is answered no sooner than LoginDelay.
func TestIMAPLoginDelay(t *testing.T) {
	const delay = 200 * time.Millisecond
	s := startIMAP(t, &embedded.IMAPOptions{LoginDelay: delay})
	c := dial(t, s)
	start := time.Now()
	if err := c.Login("user1", "secret").Wait(); err != nil {
		t.Fatalf("Login() error = %v", err)
	}
	if took := time.Since(start); took < delay {
		t.Errorf("Login() took %v, want at least LoginDelay %v", took, delay)
	}
}
