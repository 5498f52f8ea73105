package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/imapload/imapload/bus"
	"github.com/nats-io/nats.go"
	"github.com/spf13/pflag"
)

// natsConfig is the NATS connection every networked command shares. A
// password in --nats shows in the process list: --nats-user with
// --nats-password-file (or the environment) keeps it out; --nats-token has
// its -file twin too.
type natsConfig struct {
	URL      string // --nats: server URL(s), comma separated
	Creds    string // --nats-creds: credentials file
	User     string // --nats-user, with Password
	Password string // --nats-password (or its -file twin); never logged
	Token    string // --nats-token (or its -file twin); never logged
	NKey     string // --nats-nkey: NKey seed file of this role
	CA       string // --nats-ca: PEM file of the CA of the server's certificate
	Cert     string // --nats-cert: PEM client certificate, with Key
	Key      string // --nats-key: PEM private key of Cert
	Replicas int    // --replicas of imapload's streams
}

func (c *natsConfig) add(fs *pflag.FlagSet) {
	fs.StringVar(&c.URL, "nats", nats.DefaultURL, "NATS server URL(s), comma separated (a password in it shows in ps: use --nats-user)")
	fs.StringVar(&c.Creds, "nats-creds", "", "NATS credentials file")
	fs.StringVar(&c.User, "nats-user", "", "NATS user, with --nats-password-file")
	secretVar(fs, &c.Password, "nats-password", "", "password of --nats-user; prefer --nats-password-file or env IMAPLOAD_NATS_PASSWORD, as ps shows flags (never logged)")
	secretVar(fs, &c.Token, "nats-token", "", "NATS token; prefer --nats-token-file or env IMAPLOAD_NATS_TOKEN, as ps shows flags (never logged)")
	fs.StringVar(&c.NKey, "nats-nkey", "", "NKey seed file of this role, as `imapload roles` writes it")
	fs.StringVar(&c.CA, "nats-ca", "", "PEM file of the CA that signed the NATS server's certificate: TLS to NATS")
	fs.StringVar(&c.Cert, "nats-cert", "", "PEM client certificate for TLS to NATS, with --nats-key")
	fs.StringVar(&c.Key, "nats-key", "", "PEM private key of --nats-cert")
	fs.IntVar(&c.Replicas, "replicas", 1, "JetStream replicas of imapload's streams (3 on a cluster)")
}

// checks returns the errors of the flags' values, nil for a good one.
func (c *natsConfig) checks() []error {
	return []error{checkInt("replicas", c.Replicas, between(1, 5))}
}

// connect connects as name; credentials never reach a log.
func (c *natsConfig) connect(name string) (*nats.Conn, error) {
	opts, err := c.options()
	if err != nil {
		return nil, err
	}
	nc, err := bus.Connect(c.URL, name, c.Creds, opts...)
	if errors.Is(err, nats.ErrNoServers) {
		return nil, fmt.Errorf("no NATS server at %s: start `imapload nats`, or give --nats URL of a running one (%w)", bus.Redact(c.URL), err)
	}
	return nc, err
}

// bus returns the options of imapload's streams and buckets.
func (c *natsConfig) bus() *bus.Options { return &bus.Options{Replicas: c.Replicas} }

// options returns the client options of the credential and TLS flags.
// Credentials are given one way only: in the URL, a creds file, a user and
// password, a token or an NKey seed; two ways is a usage error.
func (c *natsConfig) options() ([]nats.Option, error) {
	opts, err := c.auth()
	if err != nil {
		return nil, err
	}
	tlsOpts, err := c.tls()
	return append(opts, tlsOpts...), err
}

// auth returns the option of the one way credentials were given (none for
// the URL and the creds file, which bus.Connect takes).
func (c *natsConfig) auth() ([]nats.Option, error) {
	if (c.User == "") != (c.Password == "") {
		return nil, usage(errNATSUserPassword)
	}
	if ways := c.credentialWays(); len(ways) > 1 {
		return nil, usage(fmt.Errorf("%w: %s", errNATSCredsTwice, strings.Join(ways, " and ")))
	}
	switch {
	case c.User != "":
		return []nats.Option{nats.UserInfo(c.User, c.Password)}, nil
	case c.Token != "":
		return []nats.Option{nats.Token(c.Token)}, nil
	case c.NKey != "":
		o, err := nats.NkeyOptionFromSeed(c.NKey)
		if err != nil {
			return nil, fmt.Errorf("--nats-nkey: %w", err) // names the file or the fault, never the seed
		}
		return []nats.Option{o}, nil
	}
	return nil, nil
}

// credentialWays names the ways credentials were given, by flag (never by
// value).
func (c *natsConfig) credentialWays() []string {
	var ways []string
	if strings.Contains(c.URL, "@") {
		ways = append(ways, "user info in --nats")
	}
	for _, w := range []struct{ flag, value string }{
		{"--nats-creds", c.Creds}, {"--nats-user", c.User}, {"--nats-token", c.Token}, {"--nats-nkey", c.NKey},
	} {
		if w.value != "" {
			ways = append(ways, w.flag)
		}
	}
	return ways
}

// tls returns the TLS options: a CA to verify the server and a client
// certificate, which goes with its key.
func (c *natsConfig) tls() ([]nats.Option, error) {
	var opts []nats.Option
	if c.CA != "" {
		opts = append(opts, nats.RootCAs(c.CA))
	}
	switch {
	case (c.Cert == "") != (c.Key == ""):
		return nil, usage(errNATSCertKey)
	case c.Cert != "":
		opts = append(opts, nats.ClientCert(c.Cert, c.Key))
	}
	return opts, nil
}

var (
	errNATSUserPassword = errors.New("--nats-user and --nats-password (or --nats-password-file) go together")
	errNATSCredsTwice   = errors.New("NATS credentials are given more than one way: give them one way")
	errNATSCertKey      = errors.New("--nats-cert and --nats-key go together")
)
