package main

import (
	"fmt"

	"github.com/imapload/imapload/embedded"
	"github.com/spf13/cobra"
)

func imapserverCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "imapserver",
		Short: "Run the embedded test IMAP server (in-memory, with capacity, slow-backend, login-cost and fault knobs)",
		Example: `  imapload imapserver --users 100 --workers 4 --service-time 8ms
  imapload imapserver --users 100 --bcrypt-cost 8 --slow-fraction 0.05 --slow-delay 20ms --tls`,
		Args: cobra.NoArgs,
		RunE: runIMAPServer,
	}
	addIMAPServerFlags(cmd)
	cmd.Flags().String("listen", "127.0.0.1:1143", "address to listen on (host:port)")
	return cmd
}

func addIMAPServerFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.Int("users", 100, "seeded accounts user1..userN")
	f.String("user-password", "secret", "password of every seeded account; prefer --user-password-file or env IMAPLOAD_USER_PASSWORD, as ps shows flags (never logged)")
	f.Int("workers", 0, "command slots: capacity = workers / service-time (0: unlimited)")
	f.Duration("service-time", 0, "time each command holds a slot")
	f.Float64("slow-fraction", 0, "fraction of accounts (by hash) with a slow backend")
	f.Duration("slow-delay", 0, "extra latency of a slow account's mailbox commands")
	f.Int("bcrypt-cost", 0, "bcrypt cost of a login cache miss (0: plain passwords)")
	f.Duration("login-cache-ttl", 0, "how long a login is cached (default 1m)")
	f.Bool("tls", false, "serve implicit TLS with a self-signed certificate")
	f.Float64("drop-fraction", 0, "fraction of connections dropped abruptly")
	f.Float64("no-fraction", 0, "fraction of mailbox commands answered NO")
	f.Int("max-messages", 0, "messages kept per mailbox (default 1000)")
}

// imapOptions reads the server flags into options.
func imapOptions(cmd *cobra.Command, addr string) *embedded.IMAPOptions {
	f := cmd.Flags()
	o := &embedded.IMAPOptions{Addr: addr, Password: flagString(cmd, "user-password")}
	o.Users, _ = f.GetInt("users")
	o.Workers, _ = f.GetInt("workers")
	o.ServiceTime, _ = f.GetDuration("service-time")
	o.SlowFraction, _ = f.GetFloat64("slow-fraction")
	o.SlowDelay, _ = f.GetDuration("slow-delay")
	o.BcryptCost, _ = f.GetInt("bcrypt-cost")
	o.LoginCacheTTL, _ = f.GetDuration("login-cache-ttl")
	o.TLS, _ = f.GetBool("tls")
	o.DropFraction, _ = f.GetFloat64("drop-fraction")
	o.NoFraction, _ = f.GetFloat64("no-fraction")
	o.MaxMessages, _ = f.GetInt("max-messages")
	return o
}

func runIMAPServer(cmd *cobra.Command, _ []string) error {
	srv, err := embedded.StartIMAP(imapOptions(cmd, flagString(cmd, "listen")))
	if err != nil {
		return err
	}
	defer srv.Close()
	capacity := "unlimited"
	if c := srv.Capacity(); c > 0 {
		capacity = fmt.Sprintf("%.0f commands/s", c)
	}
	users, _ := cmd.Flags().GetInt("users")
	logger(cmd).Info("imapserver: ready", "addr", srv.Addr(), "users", users, "capacity", capacity)
	fmt.Fprintf(cmd.OutOrStdout(), "IMAP test server listening on %s (%d users, capacity %s)\n", srv.Addr(), users, capacity)
	<-cmd.Context().Done()
	return nil
}
