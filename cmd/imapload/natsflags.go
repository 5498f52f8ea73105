package main

import (
	"errors"
	"strings"

	"github.com/imapload/imapload/bus"
	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
)

// addNATSFlags adds the flags every networked subcommand shares. A password
// in --nats shows in the process list: --nats-user with --nats-password-file
// (or the environment) keeps it out.
func addNATSFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.String("nats", nats.DefaultURL, "NATS server URL(s), comma separated (env IMAPLOAD_NATS; a password in it shows in ps: use --nats-user)")
	f.String("nats-creds", "", "NATS credentials file (env IMAPLOAD_NATS_CREDS)")
	f.String("nats-user", "", "NATS user, with --nats-password-file (env IMAPLOAD_NATS_USER)")
	f.String("nats-password", "", "password of --nats-user; prefer --nats-password-file or env IMAPLOAD_NATS_PASSWORD, as ps shows flags (never logged)")
	f.Int("replicas", 1, "JetStream replicas of imapload's streams (3 on a cluster)")
}

// connectNATS connects with the shared flags; credentials never reach a log.
func connectNATS(cmd *cobra.Command, name string) (*nats.Conn, error) {
	auth, err := natsAuth(cmd)
	if err != nil {
		return nil, err
	}
	return bus.Connect(flagString(cmd, "nats"), name, flagString(cmd, "nats-creds"), auth...)
}

// natsAuth returns the option of --nats-user and --nats-password, which go
// together and not with credentials in the URL.
func natsAuth(cmd *cobra.Command) ([]nats.Option, error) {
	user, pw := flagString(cmd, "nats-user"), flagString(cmd, "nats-password")
	switch {
	case user == "" && pw == "":
		return nil, nil
	case user == "" || pw == "":
		return nil, usage(errNATSUserPassword)
	case strings.Contains(flagString(cmd, "nats"), "@"):
		return nil, usage(errNATSCredsTwice)
	}
	return []nats.Option{nats.UserInfo(user, pw)}, nil
}

var (
	errNATSUserPassword = errors.New("--nats-user and --nats-password (or --nats-password-file) go together")
	errNATSCredsTwice   = errors.New("--nats holds user info and --nats-user is given: give the credentials one way")
)

func busOptions(cmd *cobra.Command) *bus.Options {
	r, _ := cmd.Flags().GetInt("replicas")
	return &bus.Options{Replicas: r}
}
