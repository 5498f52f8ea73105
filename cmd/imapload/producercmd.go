package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"runtime"

	"github.com/imapload/imapload/producer"
	"github.com/spf13/cobra"
)

func producerCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:         "producer",
		Annotations: map[string]string{annotSysmon: "awake"},
		Short:       "Run a producer: offer IMAP load on step commands and publish what it measured",
		Long: `Registers in the imapload_producers bucket, listens for step commands on imapload.step and,
for each, runs staggered open-loop IMAP sessions against --imap at its share of the rate,
publishing sample batches to the IMAPLOAD_SAMPLES stream. Scale the fleet by starting more.`,
		Example: `  imapload producer --nats nats://10.0.0.5:4222 --imap mail.example.net:993 --tls \
    --accounts-file accounts.txt --sessions 64
  IMAPLOAD_IMAP=127.0.0.1:1143 IMAPLOAD_ACCOUNTS_TEMPLATE=user%d IMAPLOAD_ACCOUNTS_COUNT=100 \
    IMAPLOAD_ACCOUNTS_PASSWORD=secret imapload producer`,
		Args: cobra.NoArgs,
		RunE: runProducer,
	}
	addNATSFlags(cmd)
	addProducerFlags(cmd)
	cmd.Flags().String("id", "", "producer id (default <hostname>-<pid>)")
	cmd.Flags().String("imap", "", "IMAP server host:port (required)")
	cmd.Flags().Bool("tls", false, "implicit TLS (IMAPS)")
	cmd.Flags().String("tls-ca", "", "PEM file of the CA to trust for --tls (default: system roots)")
	cmd.Flags().Bool("tls-insecure", false, "do not verify the server certificate (test servers only)")
	cmd.Flags().String("local-addr", "", "source IP for every dial")
	cmd.Flags().Int("procs", 1, "GOMAXPROCS for this process (0: Go's default); one thread costs the least CPU per command, so run a producer per core")
	return cmd
}

// addProducerFlags adds the flags a producer and the demo share.
func addProducerFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.String("accounts-file", "", "file of user:password lines")
	f.String("accounts-template", "user%d", "account name template, numbered from 1 (without --accounts-file)")
	f.Int("accounts-count", 100, "accounts made from the template")
	f.String("accounts-password", "secret", "password of template accounts (env IMAPLOAD_ACCOUNTS_PASSWORD; never logged)")
	f.Int("sessions", 32, "IMAP sessions per producer")
	f.Int("sessions-per-account", 2, "concurrent sessions of one account per producer")
	f.Int("queue", 0, "commands waiting for a free session before drops (default 4 × sessions)")
	f.Duration("op-timeout", 0, "our own timeout of one IMAP operation (default 10s)")
	f.Duration("flush-interval", 0, "batch interval (default 1s)")
	f.Int("reservoir", 0, "latencies kept per phase and batch (default 1024)")
	f.String("default-mix", "", "workload when a step names none, e.g. fetch=130,select=100 (default imaptest-like)")
}

func accounts(cmd *cobra.Command) ([]producer.Account, error) {
	if path := flagString(cmd, "accounts-file"); path != "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return producer.ParseAccounts(f)
	}
	n, _ := cmd.Flags().GetInt("accounts-count")
	return producer.TemplateAccounts(flagString(cmd, "accounts-template"), n, flagString(cmd, "accounts-password"))
}

// producerOptions reads the shared producer flags.
func producerOptions(cmd *cobra.Command) (*producer.Options, error) {
	f := cmd.Flags()
	accts, err := accounts(cmd)
	if err != nil {
		return nil, err
	}
	mix, err := parseMix(flagString(cmd, "default-mix"))
	if err != nil {
		return nil, err
	}
	o := &producer.Options{Accounts: accts, Mix: mix, Bus: busOptions(cmd)}
	o.Sessions, _ = f.GetInt("sessions")
	o.SessionsPerAccount, _ = f.GetInt("sessions-per-account")
	o.Queue, _ = f.GetInt("queue")
	o.OpTimeout, _ = f.GetDuration("op-timeout")
	o.FlushInterval, _ = f.GetDuration("flush-interval")
	o.Reservoir, _ = f.GetInt("reservoir")
	return o, nil
}

func tlsConfig(cmd *cobra.Command) (*tls.Config, error) {
	insecure, _ := cmd.Flags().GetBool("tls-insecure")
	cfg := &tls.Config{InsecureSkipVerify: insecure} //nolint:gosec // an explicit flag for test servers
	if path := flagString(cmd, "tls-ca"); path != "" {
		pem, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %s: no PEM certificate", path)
		}
	}
	return cfg, nil
}

func runProducer(cmd *cobra.Command, _ []string) error {
	if procs, _ := cmd.Flags().GetInt("procs"); procs > 0 {
		runtime.GOMAXPROCS(procs)
	}
	o, err := producerOptions(cmd)
	if err != nil {
		return err
	}
	o.ID, o.Addr, o.LocalAddr = flagString(cmd, "id"), flagString(cmd, "imap"), flagString(cmd, "local-addr")
	o.TLS, _ = cmd.Flags().GetBool("tls")
	if o.TLS {
		if o.TLSConfig, err = tlsConfig(cmd); err != nil {
			return err
		}
	}
	o.Logger = logger(cmd)
	nc, err := connectNATS(cmd, "imapload-producer")
	if err != nil {
		return err
	}
	defer nc.Close()
	p, err := producer.New(nc, o)
	if err != nil {
		return err
	}
	o.Logger.Info("producer: ready", "id", p.ID(), "imap", o.Addr, "accounts", len(o.Accounts))
	return p.Run(cmd.Context())
}
