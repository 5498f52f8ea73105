package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/health"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// natsReadyTimeout is how long a NATS server process waits for itself to
// accept clients: it recovers its JetStream store and opens its cluster
// routes first, which on a busy host (a CI run of every test at once) took
// more than the embedded default of 5 s for a cluster node.
const natsReadyTimeout = 30 * time.Second

func natsCmd(g *globalFlags) *cobra.Command {
	c := &natsServerConfig{Listen: givenString{value: "127.0.0.1:4222"}}
	return bind(&cobra.Command{
		Use:   "nats",
		Short: "Run an embedded NATS server with JetStream for a small fleet",
		Long: `Runs nats-server with JetStream in this process, for a fleet that has no NATS of its own.
Producers, the aggregator, the reporter and the nats CLI connect to it. For more
than one machine's worth of load, run a real NATS cluster with replicated JetStream
instead (and --replicas 3 on imapload's commands).

With --config it starts from a nats-server configuration file, such as the one
'imapload roles' writes (a user per role, least privilege); --listen, --store and
--sync, when given, override the file's listen address, store_dir and
sync_interval; --user and --password cannot be combined with it.

--sync sets how often JetStream fsyncs: by default every 2 minutes (nats-server's
default), so an OS crash can lose acknowledged batches of the last 2 minutes;
"always" fsyncs every write (see deploy/nats/README.md).

--cluster-name makes the server a node of a NATS cluster with JetStream clustered:
--cluster is where the other nodes' routes connect, --routes lists every node's
nats-route://host:port (the same list on each, its own included), and --name,
required, is the node's own and must stay the same across restarts, as must its
--store. Three nodes keep imapload's streams (--replicas 3) with one of them down.`,
		Example: `  imapload nats --listen 127.0.0.1:4222 --store /var/lib/imapload/nats
  imapload nats --config roles/nats.conf --sync always
  imapload nats --name n1 --store /var/lib/imapload/n1 --listen 127.0.0.1:4222 --cluster-name imapload \
    --cluster 127.0.0.1:6222 --routes nats-route://127.0.0.1:6222,nats-route://127.0.0.1:6223,nats-route://127.0.0.1:6224`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runNATS(cmd, c, g.logger(cmd)) },
	}, c)
}

// natsServerConfig is the configuration of `imapload nats`.
type natsServerConfig struct {
	Listen   givenString // --listen: host:port, port 0 for a free one; with Config, only when given
	Store    string      // --store: JetStream store directory
	Config   string      // --config: nats-server configuration file to start from
	Sync     string      // --sync: JetStream fsync policy, "" for the server's
	User     string      // --user the server requires
	Password string      // --password of User; never logged
	Health   healthConfig
	// A cluster node's flags.
	Name        string   // --name: the server's name, a cluster node's own
	ClusterName string   // --cluster-name: the cluster to form or join, "" for none
	Cluster     string   // --cluster: host:port the other nodes' routes connect to
	Routes      []string // --routes: every node's nats-route://host:port
}

func (c *natsServerConfig) add(fs *pflag.FlagSet) {
	fs.Var(&c.Listen, "listen", "address to listen on (host:port; port 0 picks a free one)")
	fs.StringVar(&c.Store, "store", "", "JetStream store directory (required unless --config sets one; never a shared default)")
	fs.StringVar(&c.Config, "config", "", "nats-server configuration file to start from, e.g. from 'imapload roles'")
	fs.StringVar(&c.Sync, "sync", "", "JetStream fsync policy: always, or an interval such as 10s (default: the server's, 2m)")
	fs.StringVar(&c.User, "user", "", "require this NATS user")
	secretVar(fs, &c.Password, "password", "", "password of --user (never logged)")
	c.Health.add(fs)
	fs.StringVar(&c.Name, "name", "", "server name (default imapload); required on a cluster node, its own, the same across restarts")
	fs.StringVar(&c.ClusterName, "cluster-name", "", "form or join the NATS cluster of this name (needs --name, --cluster and --routes)")
	fs.StringVar(&c.Cluster, "cluster", "", "cluster address the other nodes' routes connect to (host:port)")
	fs.StringSliceVar(&c.Routes, "routes", nil, "every cluster node's nats-route://host:port, comma-separated, its own included")
}

func (c *natsServerConfig) validate() error {
	return flagErrors([]error{c.Health.check()}, c.clusterErrors())
}

// clusterErrors lists what is wrong with the cluster flags.
func (c *natsServerConfig) clusterErrors() []error {
	if c.ClusterName == "" {
		if c.Cluster != "" || len(c.Routes) > 0 {
			return []error{errors.New("--cluster and --routes need --cluster-name")}
		}
		return nil
	}
	var errs []error
	if c.Name == "" {
		errs = append(errs, errors.New("--cluster-name needs --name: each node's own, the same across restarts"))
	}
	if _, _, err := net.SplitHostPort(c.Cluster); err != nil {
		errs = append(errs, fmt.Errorf("--cluster %q: want host:port where the other nodes' routes connect", c.Cluster))
	}
	if _, err := embedded.ParseRoutes(c.Routes); err != nil {
		errs = append(errs, fmt.Errorf("--routes: %w", err))
	}
	return errs
}

func runNATS(cmd *cobra.Command, c *natsServerConfig, log *slog.Logger) error {
	o, err := c.options()
	if err != nil {
		return err
	}
	o.Logf = func(format string, args ...any) { log.Debug(fmt.Sprintf(format, args...)) }
	ns, err := embedded.StartNATS(o)
	if err != nil {
		return err
	}
	defer ns.Shutdown()
	stop, err := c.Health.start(cmd.Context(), &health.Options{Ready: natsServerReady(ns.Server())}, log)
	if err != nil {
		return err
	}
	defer stop()
	log.Info("nats: ready", "url", ns.ClientURL(), "store", ns.Server().StoreDir(), "config", o.ConfigFile,
		"auth", o.User != "" || o.ConfigFile != "", "name", ns.Server().Name(), "cluster", ns.RouteURL())
	fmt.Fprintln(cmd.OutOrStdout(), "NATS with JetStream listening on", ns.ClientURL())
	<-cmd.Context().Done()
	log.Info("nats: shutting down")
	return nil
}

// options returns the server's options. With --config, --listen counts only
// when given (on the command line or as IMAPLOAD_LISTEN).
func (c *natsServerConfig) options() (*embedded.NATSOptions, error) {
	o := &embedded.NATSOptions{ConfigFile: c.Config, StoreDir: c.Store, User: c.User, Password: c.Password,
		Name: c.Name, ClusterName: c.ClusterName, ClusterListen: c.Cluster, Routes: c.Routes,
		ReadyTimeout: natsReadyTimeout}
	switch {
	case o.ConfigFile == "" && o.StoreDir == "":
		return nil, usage(errors.New(`required flag "store" not set (or give a --config that sets jetstream's store_dir)`))
	case o.ConfigFile != "" && o.User != "":
		return nil, usage(errors.New("--user with --config: give the users in the configuration file"))
	}
	if o.ConfigFile == "" || c.Listen.given {
		host, port, err := splitListen(c.Listen.value)
		if err != nil {
			return nil, usage(err)
		}
		o.Host, o.Port = host, port
	}
	always, interval, err := bus.ParseSync(c.Sync)
	if err != nil {
		return nil, usage(fmt.Errorf("--sync: %w", err))
	}
	o.SyncAlways, o.SyncInterval = always, interval
	return o, nil
}

// givenString is a string flag that knows whether it was given (on the
// command line or from the environment) or left at its default.
type givenString struct {
	value string
	given bool
}

func (s *givenString) String() string { return s.value }
func (s *givenString) Type() string   { return "string" }

func (s *givenString) Set(v string) error {
	s.value, s.given = v, true
	return nil
}

// splitListen splits host:port; port 0 becomes the server's "random port".
func splitListen(listen string) (string, int, error) {
	host, portStr, err := net.SplitHostPort(listen)
	if err != nil {
		return "", 0, fmt.Errorf("--listen: %w", err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return "", 0, fmt.Errorf("--listen: port %q: %w", portStr, err)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	return host, port, nil
}

// natsServerReady is the readiness of the embedded server: running, with
// JetStream.
func natsServerReady(srv *server.Server) func() error {
	return func() error {
		if !srv.Running() || !srv.JetStreamEnabled() {
			return errors.New("NATS server not running with JetStream")
		}
		return nil
	}
}
