package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/imapload/imapload/bus"
)

// writeCredentials writes into dir (created, mode 0700) an NKey seed per
// role — aggregator, reporter, operator, each producer id and each observer
// id — with the
// least privilege of bus's role table, and the nats.conf that admits them
// and nobody else (listen, JetStream in store). It returns the nats.conf's
// path. Seeds are written 0600 and never printed; nats.conf holds only
// public keys. Each run writes new ones: the seeds of an earlier run stop
// working.
func writeCredentials(dir, store, listen string, producers, observers []string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("pipeline: credentials: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", fmt.Errorf("pipeline: credentials: %w", err)
	}
	perms, err := bus.FleetPermissions(producers)
	for _, id := range observers {
		if err != nil {
			break
		}
		var o bus.Permissions
		o, err = bus.ObserverPermissions(id)
		perms = append(perms, o)
	}
	if err != nil {
		return "", fmt.Errorf("pipeline: credentials: %w", err)
	}
	users, err := bus.WriteSeeds(dir, perms)
	if err != nil {
		return "", fmt.Errorf("pipeline: credentials: %w", err)
	}
	var b strings.Builder
	if err := (bus.ServerConfig{Listen: listen, StoreDir: store, Users: users}).Write(&b); err != nil {
		return "", fmt.Errorf("pipeline: credentials: %w", err)
	}
	conf := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(conf, []byte(b.String()), 0o600); err != nil {
		return "", fmt.Errorf("pipeline: credentials: %w", err)
	}
	return conf, nil
}
