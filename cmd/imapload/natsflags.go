package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/imapload/imapload/bus"
	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
)

// addNATSFlags adds the flags every networked subcommand shares. A password
// in --nats shows in the process list: --nats-user with --nats-password-file
// (or the environment) keeps it out; --nats-token has its -file twin too.
func addNATSFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.String("nats", nats.DefaultURL, "NATS server URL(s), comma separated (a password in it shows in ps: use --nats-user)")
	f.String("nats-creds", "", "NATS credentials file (env IMAPLOAD_NATS_CREDS)")
	f.String("nats-user", "", "NATS user, with --nats-password-file (env IMAPLOAD_NATS_USER)")
	f.String("nats-password", "", "password of --nats-user; prefer --nats-password-file or env IMAPLOAD_NATS_PASSWORD, as ps shows flags (never logged)")
	f.String("nats-token", "", "NATS token; prefer --nats-token-file or env IMAPLOAD_NATS_TOKEN, as ps shows flags (never logged)")
	f.String("nats-nkey", "", "NKey seed file of this role, as `imapload roles` writes it (env IMAPLOAD_NATS_NKEY)")
	f.String("nats-ca", "", "PEM file of the CA that signed the NATS server's certificate: TLS to NATS (env IMAPLOAD_NATS_CA)")
	f.String("nats-cert", "", "PEM client certificate for TLS to NATS, with --nats-key (env IMAPLOAD_NATS_CERT)")
	f.String("nats-key", "", "PEM private key of --nats-cert (env IMAPLOAD_NATS_KEY)")
	f.Int("replicas", 1, "JetStream replicas of imapload's streams (3 on a cluster)")
}

// connectNATS connects with the shared flags; credentials never reach a log.
func connectNATS(cmd *cobra.Command, name string) (*nats.Conn, error) {
	opts, err := natsOptions(cmd)
	if err != nil {
		return nil, err
	}
	return bus.Connect(flagString(cmd, "nats"), name, flagString(cmd, "nats-creds"), opts...)
}

// natsOptions returns the client options of the credential and TLS flags.
// Credentials are given one way only: in the URL, a creds file, a user and
// password, a token or an NKey seed; two ways is a usage error.
func natsOptions(cmd *cobra.Command) ([]nats.Option, error) {
	opts, err := natsAuth(cmd)
	if err != nil {
		return nil, err
	}
	tlsOpts, err := natsTLS(cmd)
	return append(opts, tlsOpts...), err
}

// natsAuth returns the option of the one way credentials were given (none
// for the URL and the creds file, which bus.Connect takes).
func natsAuth(cmd *cobra.Command) ([]nats.Option, error) {
	user, pw := flagString(cmd, "nats-user"), flagString(cmd, "nats-password")
	if (user == "") != (pw == "") {
		return nil, usage(errNATSUserPassword)
	}
	if ways := credentialWays(cmd); len(ways) > 1 {
		return nil, usage(fmt.Errorf("%w: %s", errNATSCredsTwice, strings.Join(ways, " and ")))
	}
	switch {
	case user != "":
		return []nats.Option{nats.UserInfo(user, pw)}, nil
	case flagString(cmd, "nats-token") != "":
		return []nats.Option{nats.Token(flagString(cmd, "nats-token"))}, nil
	case flagString(cmd, "nats-nkey") != "":
		o, err := nats.NkeyOptionFromSeed(flagString(cmd, "nats-nkey"))
		if err != nil {
			return nil, fmt.Errorf("--nats-nkey: %w", err) // names the file or the fault, never the seed
		}
		return []nats.Option{o}, nil
	}
	return nil, nil
}

// credentialWays names the ways credentials were given, by flag (never by
// value).
func credentialWays(cmd *cobra.Command) []string {
	var ways []string
	if strings.Contains(flagString(cmd, "nats"), "@") {
		ways = append(ways, "user info in --nats")
	}
	for _, f := range []string{"nats-creds", "nats-user", "nats-token", "nats-nkey"} {
		if flagString(cmd, f) != "" {
			ways = append(ways, "--"+f)
		}
	}
	return ways
}

// natsTLS returns the TLS options: a CA to verify the server and a client
// certificate, which goes with its key.
func natsTLS(cmd *cobra.Command) ([]nats.Option, error) {
	ca, cert, key := flagString(cmd, "nats-ca"), flagString(cmd, "nats-cert"), flagString(cmd, "nats-key")
	var opts []nats.Option
	if ca != "" {
		opts = append(opts, nats.RootCAs(ca))
	}
	switch {
	case (cert == "") != (key == ""):
		return nil, usage(errNATSCertKey)
	case cert != "":
		opts = append(opts, nats.ClientCert(cert, key))
	}
	return opts, nil
}

var (
	errNATSUserPassword = errors.New("--nats-user and --nats-password (or --nats-password-file) go together")
	errNATSCredsTwice   = errors.New("NATS credentials are given more than one way: give them one way")
	errNATSCertKey      = errors.New("--nats-cert and --nats-key go together")
)

func busOptions(cmd *cobra.Command) *bus.Options {
	r, _ := cmd.Flags().GetInt("replicas")
	return &bus.Options{Replicas: r}
}
