package main

import (
	"fmt"
	"net"
	"strconv"

	"github.com/imapload/imapload/embedded"
	"github.com/spf13/cobra"
)

func natsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "nats",
		Short: "Run an embedded NATS server with JetStream for a small fleet",
		Long: `Runs nats-server with JetStream in this process, for a fleet that has no NATS of its own.
Producers, the aggregator, the reporter and the nats CLI connect to it. For more
than one machine's worth of load, run a real NATS cluster with replicated JetStream
instead (and --replicas 3 on imapload's commands).`,
		Example: `  imapload nats --listen 127.0.0.1:4222 --store /var/lib/imapload/nats`,
		Args:    cobra.NoArgs,
		RunE:    runNATS,
	}
	cmd.Flags().String("listen", "127.0.0.1:4222", "address to listen on (host:port)")
	cmd.Flags().String("store", "", "JetStream store directory (required; never a shared default)")
	cmd.Flags().String("user", "", "require this NATS user (env IMAPLOAD_USER)")
	cmd.Flags().String("password", "", "password of --user (env IMAPLOAD_PASSWORD; never logged)")
	_ = cmd.MarkFlagRequired("store")
	return cmd
}

func runNATS(cmd *cobra.Command, _ []string) error {
	host, portStr, err := net.SplitHostPort(flagString(cmd, "listen"))
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return fmt.Errorf("--listen: port %q: %w", portStr, err)
	}
	log := logger(cmd)
	ns, err := embedded.StartNATS(&embedded.NATSOptions{
		Host: host, Port: port, StoreDir: flagString(cmd, "store"),
		User: flagString(cmd, "user"), Password: flagString(cmd, "password"),
		Logf: func(format string, args ...any) { log.Debug(fmt.Sprintf(format, args...)) },
	})
	if err != nil {
		return err
	}
	defer ns.Shutdown()
	log.Info("nats: ready", "url", ns.ClientURL(), "store", flagString(cmd, "store"), "auth", flagString(cmd, "user") != "")
	fmt.Fprintln(cmd.OutOrStdout(), "NATS with JetStream listening on", ns.ClientURL())
	<-cmd.Context().Done()
	log.Info("nats: shutting down")
	return nil
}
