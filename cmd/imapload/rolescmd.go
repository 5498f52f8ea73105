package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/imapload/imapload/bus"
)

func rolesCmd() *cobra.Command {
	c := &rolesConfig{}
	return bind(&cobra.Command{
		Use:   "roles",
		Short: "Write a nats-server configuration with a least-privilege user per role, and their NKey seeds",
		Long: `Writes into --out a nats.conf for nats-server (or 'imapload nats --config') with one
NKey user per role, each allowed only what its role does (the table is in
bus/roles.go; deploy/nats/README.md explains it): aggregator, reporter,
operator, and one user per producer id, since a producer may publish only
batches under its own id and write only its own registry key.

Beside it, one NKey seed file per role (<role>.nk, mode 0600): give each
process its own with --nats-nkey (or IMAPLOAD_NATS_NKEY). The seeds are the
secrets; nats.conf holds only public keys.

With --env-keys no key is generated: the config reads every public key from an
environment variable (IMAPLOAD_NKEY_<ROLE>, e.g. IMAPLOAD_NKEY_PRODUCER_1) and is
printed (or written to --out/nats.conf); deploy/nats/imapload.conf is made so.`,
		Example: `  imapload roles --out /etc/imapload/roles --producers 8 --store /var/lib/imapload/nats
  imapload nats --config /etc/imapload/roles/nats.conf
  imapload producer --id producer-1 --nats-nkey /etc/imapload/roles/producer-1.nk --imap mail:143
  imapload roles --producers 3 --env-keys > deploy/nats/imapload.conf`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runRoles(cmd, c) },
	}, c)
}

// rolesConfig is the configuration of `imapload roles`.
type rolesConfig struct {
	Out       string // --out: directory for nats.conf and the seed files
	Producers string // --producers: ids, comma separated, or a count
	Listen    string // --listen: the server's client address
	Store     string // --store: the server's JetStream store directory
	Sync      string // --sync: JetStream fsync policy, "" for the server's
	EnvKeys   bool   // --env-keys: public keys from IMAPLOAD_NKEY_<ROLE>, no seed written
	Force     bool   // --force: replace the nats.conf and seeds in Out
}

func (c *rolesConfig) add(fs *pflag.FlagSet) {
	fs.StringVar(&c.Out, "out", "", "directory for nats.conf and the seed files (created, mode 0700)")
	fs.StringVar(&c.Producers, "producers", "", "producer ids, comma separated (p1,p2), or a count N for producer-1 … producer-N")
	fs.StringVar(&c.Listen, "listen", "127.0.0.1:4222", "the server's client address")
	fs.StringVar(&c.Store, "store", "/var/lib/imapload/nats", "JetStream store directory of the server")
	fs.StringVar(&c.Sync, "sync", "", "JetStream fsync policy: always, or an interval such as 10s (default: the server's, 2m)")
	fs.BoolVar(&c.EnvKeys, "env-keys", false, "read the public keys from IMAPLOAD_NKEY_<ROLE> variables; no seed is written")
	fs.BoolVar(&c.Force, "force", false, "replace the nats.conf and seeds already in --out (every process needs its new seed)")
}

func (c *rolesConfig) validate() error { return checkOut(c.Out) }

func runRoles(cmd *cobra.Command, c *rolesConfig) error {
	ids, err := producerIDs(c.Producers)
	if err != nil {
		return usage(err)
	}
	perms, err := bus.FleetPermissions(ids)
	if err != nil {
		return usage(err)
	}
	if c.Out == "" && !c.EnvKeys {
		return usage(errors.New("--out is required, for the seed files (or --env-keys)"))
	}
	sc := bus.ServerConfig{Listen: c.Listen, StoreDir: c.Store, Sync: c.Sync}
	if _, _, err := bus.ParseSync(sc.Sync); err != nil {
		return usage(fmt.Errorf("--sync: %w", err))
	}
	if c.EnvKeys {
		return writeEnvConfig(cmd, sc, perms, c.Out, c.Force)
	}
	if err := prepareOut(c.Out, c.Force); err != nil {
		return err
	}
	if sc.Users, err = bus.WriteSeeds(c.Out, perms); err != nil {
		return err
	}
	if err := writeConfig(filepath.Join(c.Out, "nats.conf"), sc); err != nil {
		return err
	}
	printRoles(cmd.OutOrStdout(), c.Out, sc.Users)
	return nil
}

// producerIDs reads --producers: a count N (producer-1 … producer-N) or a
// comma-separated list of ids.
func producerIDs(s string) ([]string, error) {
	if s == "" {
		return nil, errors.New("--producers is required: a count (8) or the ids (p1,p2)")
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 || n > 10_000 {
			return nil, fmt.Errorf("--producers %d: want 1 to 10000", n)
		}
		ids := make([]string, n)
		for i := range ids {
			ids[i] = "producer-" + strconv.Itoa(i+1)
		}
		return ids, nil
	}
	ids := strings.Split(s, ",")
	for i := range ids {
		ids[i] = strings.TrimSpace(ids[i])
	}
	return ids, nil
}

// writeEnvConfig writes the config with every key read from the
// environment, to out/nats.conf or to stdout.
func writeEnvConfig(cmd *cobra.Command, c bus.ServerConfig, perms []bus.Permissions, out string, force bool) error {
	for _, p := range perms {
		c.Users = append(c.Users, bus.User{Permissions: p, NKey: "$" + bus.NKeyVar(p.Role)})
	}
	if out == "" {
		return c.Write(cmd.OutOrStdout())
	}
	if err := prepareOut(out, force); err != nil {
		return err
	}
	return writeConfig(filepath.Join(out, "nats.conf"), c)
}

// prepareOut creates out (an empty folder is made private: 0700), and
// refuses to replace a config in it unless force: the running fleet's keys
// would stop working.
func prepareOut(out string, force bool) error {
	if err := os.MkdirAll(out, 0o700); err != nil {
		return fmt.Errorf("roles: %w", err)
	}
	if entries, err := os.ReadDir(out); err == nil && len(entries) == 0 {
		if err := os.Chmod(out, 0o700); err != nil {
			return fmt.Errorf("roles: %w", err)
		}
	}
	conf := filepath.Join(out, "nats.conf")
	if _, err := os.Stat(conf); err == nil && !force {
		return usage(fmt.Errorf("%s exists: --force replaces it and every seed beside it", conf))
	}
	return nil
}

func writeConfig(path string, c bus.ServerConfig) error {
	var b strings.Builder
	if err := c.Write(&b); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// printRoles lists what was written and how each process uses it.
func printRoles(w io.Writer, out string, users []bus.User) {
	fmt.Fprintf(w, "wrote %s (public keys only)\n", filepath.Join(out, "nats.conf"))
	for _, u := range users {
		fmt.Fprintf(w, "  %-24s %s  seed %s\n", u.Role, u.NKey, filepath.Join(out, u.Role+".nk"))
	}
	fmt.Fprintf(w, "start the server:  imapload nats --config %s   (or nats-server -c %s)\n",
		filepath.Join(out, "nats.conf"), filepath.Join(out, "nats.conf"))
	fmt.Fprintf(w, "give each process its seed:  --nats-nkey %s  (env IMAPLOAD_NATS_NKEY)\n", filepath.Join(out, "<role>.nk"))
}
