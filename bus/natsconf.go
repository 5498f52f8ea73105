package bus

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// ServerConfig is a nats-server configuration for a fleet with roles: a
// listen address, JetStream with an explicit store directory and sync
// policy, and one NKey user per role with the role's permissions. Write
// renders it in nats-server's configuration syntax, for `nats-server -c`
// or `imapload nats --config`.
type ServerConfig struct {
	// Listen is the client address, host:port. Default "127.0.0.1:4222".
	Listen string
	// StoreDir is JetStream's store directory. Required: the server's default
	// ($TMPDIR/jetstream) is shared by every server on the host.
	StoreDir string
	// Sync is JetStream's fsync policy: "" keeps the server's default (every
	// 2 minutes), "always" syncs every write, a duration ("10s") sets the
	// interval. See deploy/nats/README.md for the trade-off.
	Sync string
	// MaxMemory and MaxStore cap JetStream's memory and file storage, in
	// bytes. Defaults 256 MiB and 2 GiB, as `imapload nats` has them.
	MaxMemory, MaxStore int64
	// MaxPayload is the largest message, in bytes. Default 1 MiB: the outer
	// bound of every decoded batch.
	MaxPayload int32
	// Users are the roles, each with its NKey.
	Users []User
}

// User is one role's NKey user.
type User struct {
	Permissions
	// NKey is the user's public NKey ("U…"), or a reference to an
	// environment variable that holds it ("$IMAPLOAD_NKEY_AGGREGATOR"),
	// which nats-server resolves when it reads the file.
	NKey string
}

// NKeyVar is the environment variable a configuration written with keys
// from the environment reads role's public NKey from.
func NKeyVar(role string) string {
	return "IMAPLOAD_NKEY_" + strings.ToUpper(strings.ReplaceAll(role, "-", "_"))
}

// ErrServerConfig reports a configuration that cannot be written.
var ErrServerConfig = errors.New("bus: server config")

// ParseSync checks a sync policy ("", "always" or a positive duration).
func ParseSync(s string) (always bool, interval time.Duration, err error) {
	if s == "" || s == "always" {
		return s == "always", 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return false, 0, fmt.Errorf("%w: sync %q: want always or a positive duration such as 10s", ErrServerConfig, s)
	}
	return false, d, nil
}

// Write renders c. It fails on a missing store directory, a bad sync policy
// or two users with the same key.
func (c ServerConfig) Write(w io.Writer) error {
	if err := c.check(); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString(configHeader)
	fmt.Fprintf(&b, "listen: %s\nmax_payload: %d\n\n", strconv.Quote(c.listen()), c.maxPayload())
	c.writeJetStream(&b)
	b.WriteString("authorization {\n  users = [\n")
	for _, u := range c.Users {
		writeUser(&b, u)
	}
	b.WriteString("  ]\n}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

const configHeader = `# nats-server configuration of an imapload fleet with roles.
# Written by 'imapload roles' from the table in bus/roles.go: regenerate it
# rather than edit it. Run it with 'nats-server -c FILE' or
# 'imapload nats --config FILE'. Every client must log in with its role's
# NKey seed (imapload --nats-nkey FILE; nats --nkey FILE).

`

func (c ServerConfig) check() error {
	if c.StoreDir == "" {
		return fmt.Errorf("%w: no store directory", ErrServerConfig)
	}
	if _, _, err := ParseSync(c.Sync); err != nil {
		return err
	}
	seen := map[string]string{}
	for _, u := range c.Users {
		if u.NKey == "" {
			return fmt.Errorf("%w: role %s has no key", ErrServerConfig, u.Role)
		}
		if other, ok := seen[u.NKey]; ok {
			return fmt.Errorf("%w: roles %s and %s have the same key", ErrServerConfig, other, u.Role)
		}
		seen[u.NKey] = u.Role
	}
	return nil
}

func (c ServerConfig) writeJetStream(b *strings.Builder) {
	b.WriteString("jetstream {\n")
	fmt.Fprintf(b, "  store_dir: %s\n", strconv.Quote(c.StoreDir))
	fmt.Fprintf(b, "  max_memory_store: %d\n  max_file_store: %d\n", orDefault(c.MaxMemory, 256<<20), orDefault(c.MaxStore, 2<<30))
	switch c.Sync {
	case "":
		b.WriteString("  # sync_interval: the server's default, an fsync every 2 minutes: an OS crash\n" +
			"  # may lose acknowledged batches of the last 2 minutes; rerun the step, or\n" +
			"  # regenerate with --sync always (see deploy/nats/README.md).\n")
	case "always":
		b.WriteString("  sync_interval: always  # fsync every write: no acknowledged batch is lost on an OS crash\n")
	default:
		fmt.Fprintf(b, "  sync_interval: %s\n", strconv.Quote(c.Sync))
	}
	b.WriteString("}\n\n")
}

func writeUser(b *strings.Builder, u User) {
	fmt.Fprintf(b, "    # %s\n    {\n      nkey: %s\n      permissions: {\n", u.Doc, u.NKey)
	fmt.Fprintf(b, "        publish: { allow: %s }\n", quoteList(u.Publish))
	fmt.Fprintf(b, "        subscribe: { allow: %s }\n", quoteList(u.Subscribe))
	if u.AllowResponses {
		b.WriteString("        allow_responses: true\n")
	}
	b.WriteString("      }\n    }\n")
}

// quoteList renders subjects as a list of quoted strings, one a line when
// there are more than two: quoted, "$JS…" is a subject, not a variable
// reference.
func quoteList(subjects []string) string {
	q := make([]string, len(subjects))
	for i, s := range subjects {
		q[i] = strconv.Quote(s)
	}
	if len(q) <= 2 {
		return "[" + strings.Join(q, ", ") + "]"
	}
	return "[\n          " + strings.Join(q, "\n          ") + "\n        ]"
}

func (c ServerConfig) listen() string {
	if c.Listen == "" {
		return "127.0.0.1:4222"
	}
	return c.Listen
}

func (c ServerConfig) maxPayload() int32 {
	if c.MaxPayload <= 0 {
		return 1 << 20
	}
	return c.MaxPayload
}

func orDefault(v, def int64) int64 {
	if v <= 0 {
		return def
	}
	return v
}
