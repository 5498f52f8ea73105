package bus_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/imapload/imapload/bus"
)

// TestServerConfigParses renders the permissions of a fleet and reads the
// file back with nats-server's own parser: every role is there with its
// key and exactly the table's permissions.
func TestServerConfigParses(t *testing.T) {
	perms, err := bus.FleetPermissions([]string{"producer-1", "p_2"})
	if err != nil {
		t.Fatal(err)
	}
	c := bus.ServerConfig{Listen: "127.0.0.1:4333", StoreDir: t.TempDir(), Sync: "always"}
	for _, p := range perms {
		kp, err := nkeys.CreateUser()
		if err != nil {
			t.Fatal(err)
		}
		pub, _ := kp.PublicKey()
		c.Users = append(c.Users, bus.User{Permissions: p, NKey: pub})
	}
	path := filepath.Join(t.TempDir(), "nats.conf")
	var b strings.Builder
	if err := c.Write(&b); err != nil {
		t.Fatalf("ServerConfig.Write() error = %v", err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("ProcessConfigFile(written config) error = %v\n%s", err, b.String())
	}
	if o.Port != 4333 || !o.JetStream || o.StoreDir != c.StoreDir || !o.SyncAlways || o.MaxPayload != 1<<20 {
		t.Errorf("parsed port %d, jetstream %v, store %q, sync always %v, max payload %d; want 4333, true, %q, true, 1 MiB",
			o.Port, o.JetStream, o.StoreDir, o.SyncAlways, o.MaxPayload, c.StoreDir)
	}
	if len(o.Nkeys) != len(c.Users) {
		t.Fatalf("parsed %d NKey users, want %d", len(o.Nkeys), len(c.Users))
	}
	for i, u := range c.Users {
		checkParsedUser(t, o.Nkeys[i], u)
	}
}

func checkParsedUser(t *testing.T, got *server.NkeyUser, want bus.User) {
	t.Helper()
	p := got.Permissions
	switch {
	case got.Nkey != want.NKey:
		t.Errorf("user %s: nkey %s, want %s", want.Role, got.Nkey, want.NKey)
	case p == nil || p.Publish == nil || p.Subscribe == nil:
		t.Errorf("user %s: permissions %+v, want publish and subscribe lists", want.Role, p)
	case !slices.Equal(p.Publish.Allow, want.Publish) || len(p.Publish.Deny) > 0:
		t.Errorf("user %s: publish %v, want %v", want.Role, p.Publish.Allow, want.Publish)
	case !slices.Equal(p.Subscribe.Allow, want.Subscribe) || len(p.Subscribe.Deny) > 0:
		t.Errorf("user %s: subscribe %v, want %v", want.Role, p.Subscribe.Allow, want.Subscribe)
	case (p.Response != nil) != want.AllowResponses:
		t.Errorf("user %s: responses %+v, want allowed = %v", want.Role, p.Response, want.AllowResponses)
	}
}

func TestServerConfigErrors(t *testing.T) {
	agg := bus.User{Permissions: bus.AggregatorPermissions(), NKey: "$A"}
	rep := bus.User{Permissions: bus.ReporterPermissions(), NKey: "$A"}
	tests := []struct {
		name string
		c    bus.ServerConfig
	}{
		{"no store dir", bus.ServerConfig{}},
		{"bad sync", bus.ServerConfig{StoreDir: "/x", Sync: "often"}},
		{"negative sync", bus.ServerConfig{StoreDir: "/x", Sync: "-1s"}},
		{"no key", bus.ServerConfig{StoreDir: "/x", Users: []bus.User{{Permissions: bus.OperatorPermissions()}}}},
		{"shared key", bus.ServerConfig{StoreDir: "/x", Users: []bus.User{agg, rep}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := tt.c.Write(&b); !errors.Is(err, bus.ErrServerConfig) {
				t.Errorf("ServerConfig.Write() error = %v, want ErrServerConfig", err)
			}
		})
	}
}

func TestFleetPermissionsErrors(t *testing.T) {
	for _, ids := range [][]string{{"p.1"}, {"p1", "p1"}, {"aggregator"}, {""}} {
		if _, err := bus.FleetPermissions(ids); err == nil {
			t.Errorf("FleetPermissions(%q) succeeded, want an error", ids)
		}
	}
}

// TestNoRolePublishesOnInboxes: replies and pull-consumer messages arrive on
// inboxes, so no role may publish there (a producer answers requests through
// allow_responses).
func TestNoRolePublishesOnInboxes(t *testing.T) {
	perms, _ := bus.FleetPermissions([]string{"p1"})
	for _, p := range perms {
		for _, s := range p.Publish {
			if strings.HasPrefix(s, "_INBOX") || s == ">" || strings.HasPrefix(s, "$JS.API.STREAM.UPDATE") ||
				strings.HasPrefix(s, "$JS.API.STREAM.DELETE") || strings.HasPrefix(s, "$JS.API.STREAM.PURGE") {
				t.Errorf("role %s may publish on %q", p.Role, s)
			}
		}
	}
}
