package bus_test

import (
	"os"
	"testing"

	"github.com/imapload/imapload/bus"
	"github.com/nats-io/nkeys"
)

// TestWriteSeeds: one seed per role, mode 0600 even over a file that was
// readable by others, each the key pair of the public key returned.
func TestWriteSeeds(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(bus.SeedFile(dir, "reporter"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	perms, err := bus.FleetPermissions([]string{"p1"})
	if err != nil {
		t.Fatal(err)
	}
	users, err := bus.WriteSeeds(dir, perms)
	if err != nil || len(users) != len(perms) {
		t.Fatalf("WriteSeeds() = %d users, %v; want %d", len(users), err, len(perms))
	}
	for _, u := range users {
		path := bus.SeedFile(dir, u.Role)
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, want mode 0600", path, err)
			continue
		}
		b, _ := os.ReadFile(path)
		kp, err := nkeys.FromSeed(b[:len(b)-1])
		if err != nil {
			t.Errorf("%s: not a seed: %v", path, err)
			continue
		}
		if pub, _ := kp.PublicKey(); pub != u.NKey {
			t.Errorf("%s: seed of %s, WriteSeeds returned %s", u.Role, pub, u.NKey)
		}
	}
}
