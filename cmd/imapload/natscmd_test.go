package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestNATSCommand runs `imapload nats` as a process: an external client
// connects, JetStream stores and returns a message in the given store
// directory, and SIGTERM ends the process with status 0.
func TestNATSCommand(t *testing.T) {
	store := t.TempDir()
	listen := "127.0.0.1:" + strconv.Itoa(freePort(t))
	p := startProc(t, "nats", nil, "nats", "--listen", listen, "--store", store)
	url := p.waitMatch(t, natsURLRe, 15*time.Second)
	if want := "nats://" + listen; url != want {
		t.Errorf("imapload nats --listen %s printed %s, want %s", listen, url, want)
	}
	nc := connect(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream.New: %v", err)
	}
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "CMDTEST", Subjects: []string{"cmdtest.>"}, Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatalf("CreateStream: %v", err)
	}
	if _, err := js.Publish(ctx, "cmdtest.one", []byte("hello")); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	m, err := st.GetMsg(ctx, 1)
	if err != nil || string(m.Data) != "hello" {
		t.Fatalf("GetMsg(1) = %v, %v; want \"hello\"", m, err)
	}
	if _, err := os.Stat(filepath.Join(store, "jetstream")); err != nil {
		t.Errorf("JetStream store not in --store %s: %v", store, err)
	}
	nc.Close()
	took := p.stop(t, 5*time.Second)
	t.Logf("imapload nats exited %v after SIGTERM", took.Round(time.Millisecond))
}

// TestNATSCommandBadFlags: bad flags fail with a clear error, starting nothing.
func TestNATSCommandBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "no store", args: []string{"nats", "--listen", "127.0.0.1:0"}, want: `"store" not set`},
		{name: "no port", args: []string{"nats", "--listen", "127.0.0.1", "--store", t.TempDir()}, want: "--listen"},
		{name: "bad port", args: []string{"nats", "--listen", "127.0.0.1:http", "--store", t.TempDir()}, want: `port "http"`},
		{name: "stray argument", args: []string{"nats", "--store", t.TempDir(), "extra"}, want: "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, _, err := runCLI(ctx, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("imapload %s = %v, want an error containing %q", strings.Join(tt.args, " "), err, tt.want)
			}
		})
	}
}
