package bus

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/nats-io/nkeys"
)

// WriteSeeds generates an NKey user per role, writes its seed to
// dir/<role>.nk (mode 0600, whatever mode a file already there had) and
// returns the users with their public keys, for ServerConfig.Users. The
// seeds are the secrets: nothing else is written, and an error names the
// file, never a seed. `imapload roles` and `imapload run --listen` write
// their credentials with it.
func WriteSeeds(dir string, perms []Permissions) ([]User, error) {
	users := make([]User, 0, len(perms))
	for _, p := range perms {
		pub, err := writeSeed(SeedFile(dir, p.Role))
		if err != nil {
			return nil, fmt.Errorf("bus: seed of %s: %w", p.Role, err)
		}
		users = append(users, User{Permissions: p, NKey: pub})
	}
	return users, nil
}

// SeedFile is where WriteSeeds puts role's seed in dir.
func SeedFile(dir, role string) string { return filepath.Join(dir, role+".nk") }

// writeSeed creates a user key pair, writes its seed to path and returns
// its public key.
func writeSeed(path string) (string, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return "", err
	}
	defer kp.Wipe()
	seed, err := kp.Seed()
	if err != nil {
		return "", err
	}
	if err := writePrivate(path, append(seed, '\n')); err != nil {
		return "", err
	}
	return kp.PublicKey()
}

// writePrivate writes b to path with mode 0600, whatever mode a file
// already there had.
func writePrivate(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
