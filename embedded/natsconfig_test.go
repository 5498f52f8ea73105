package embedded_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/imapload/imapload/embedded"
)

// writeConf writes a nats-server configuration file into a temporary
// directory; "STORE" in text becomes a temporary store directory.
func writeConf(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	text = strings.ReplaceAll(text, "STORE", strconv.Quote(filepath.Join(dir, "js")))
	path := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStartNATSConfigFile starts from a file: its users and sync policy
// apply, Port -1 overrides its port, and JetStream works.
func TestStartNATSConfigFile(t *testing.T) {
	conf := writeConf(t, `listen: "127.0.0.1:1"
jetstream { store_dir: STORE, sync_interval: always }
authorization { user: alice, password: "s3cret" }
`)
	n, err := embedded.StartNATS(&embedded.NATSOptions{ConfigFile: conf, Host: "127.0.0.1", Port: -1})
	if err != nil {
		t.Fatalf("StartNATS(ConfigFile) error = %v", err)
	}
	t.Cleanup(n.Shutdown)
	if js := n.Server().JetStreamConfig(); js == nil || !js.SyncAlways {
		t.Errorf("JetStreamConfig() = %+v, want SyncAlways from the file", js)
	}
	if strings.HasSuffix(n.ClientURL(), ":1") {
		t.Errorf("ClientURL() = %s, want the random port that overrides the file's", n.ClientURL())
	}
	if nc, err := n.Connect(); err == nil {
		nc.Close()
		t.Errorf("Connect() without the file's user succeeded")
	}
	nc, err := n.Connect(nats.UserInfo("alice", "s3cret"))
	if err != nil {
		t.Fatalf("Connect(file's user) error = %v", err)
	}
	defer nc.Close()
	roundTrip(t, nc)
}

// TestStartNATSConfigOverrides: StoreDir and the sync policy given beside a
// file win over the file's.
func TestStartNATSConfigOverrides(t *testing.T) {
	conf := writeConf(t, "jetstream { store_dir: STORE, sync_interval: always }\n")
	store := t.TempDir()
	n := startNATS(t, &embedded.NATSOptions{ConfigFile: conf, Host: "127.0.0.1", Port: -1, StoreDir: store, SyncInterval: 5 * time.Second})
	js := n.Server().JetStreamConfig()
	if js == nil || js.StoreDir != filepath.Join(store, "jetstream") && js.StoreDir != store {
		t.Errorf("JetStreamConfig().StoreDir = %+v, want under %s", js, store)
	}
	if js != nil && (js.SyncAlways || js.SyncInterval != 5*time.Second) {
		t.Errorf("JetStreamConfig() SyncAlways %v, SyncInterval %v; want false, 5s", js.SyncAlways, js.SyncInterval)
	}
}

func TestStartNATSConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		opts embedded.NATSOptions
		conf string
		want error
	}{
		{"no store dir", embedded.NATSOptions{Host: "127.0.0.1", Port: -1}, "listen: \"127.0.0.1:-1\"\n", embedded.ErrNoStoreDir},
		{"user beside a file", embedded.NATSOptions{Host: "127.0.0.1", Port: -1, User: "u", Password: "p"}, "jetstream { store_dir: STORE }\n", embedded.ErrBadOption},
		{"missing variable", embedded.NATSOptions{Host: "127.0.0.1", Port: -1}, "jetstream { store_dir: STORE }\nauthorization { users = [ { nkey: $IMAPLOAD_NO_SUCH_VARIABLE } ] }\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.opts
			o.ConfigFile = writeConf(t, tt.conf)
			n, err := embedded.StartNATS(&o)
			if err == nil {
				n.Shutdown()
				t.Fatalf("StartNATS() succeeded, want an error")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("StartNATS() error = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestStartNATSSync: the sync policy applies without a file too.
func TestStartNATSSync(t *testing.T) {
	n := startNATS(t, &embedded.NATSOptions{SyncAlways: true})
	if js := n.Server().JetStreamConfig(); js == nil || !js.SyncAlways {
		t.Errorf("JetStreamConfig() = %+v, want SyncAlways", js)
	}
}

// TestStartNATSAddressInUse: a taken port is named as such.
func TestStartNATSAddressInUse(t *testing.T) {
	first := startNATS(t, nil)
	_, port, _ := strings.Cut(strings.TrimPrefix(first.ClientURL(), "nats://"), ":")
	p, _ := strconv.Atoi(port)
	n, err := embedded.StartNATS(&embedded.NATSOptions{StoreDir: t.TempDir(), Port: p, ReadyTimeout: time.Second})
	if err == nil {
		n.Shutdown()
		t.Fatalf("StartNATS() on the taken port %d succeeded", p)
	}
	if !errors.Is(err, embedded.ErrNotReady) || !strings.Contains(err.Error(), "address in use") {
		t.Errorf("StartNATS() on a taken port error = %v, want ErrNotReady saying address in use", err)
	}
}
