package main

import (
	"github.com/imapload/imapload/bus"
	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
)

// addNATSFlags adds the flags every networked subcommand shares.
func addNATSFlags(cmd *cobra.Command) {
	cmd.Flags().String("nats", nats.DefaultURL, "NATS server URL(s), comma separated (env IMAPLOAD_NATS)")
	cmd.Flags().String("nats-creds", "", "NATS credentials file (env IMAPLOAD_NATS_CREDS)")
	cmd.Flags().Int("replicas", 1, "JetStream replicas of imapload's streams (3 on a cluster)")
}

// connectNATS connects with the shared flags; credentials never reach a log.
func connectNATS(cmd *cobra.Command, name string) (*nats.Conn, error) {
	return bus.Connect(flagString(cmd, "nats"), name, flagString(cmd, "nats-creds"))
}

func busOptions(cmd *cobra.Command) *bus.Options {
	r, _ := cmd.Flags().GetInt("replicas")
	return &bus.Options{Replicas: r}
}
