package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"

	"github.com/imapload/imapload/producer"
	"github.com/spf13/cobra"
)

func producerCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "producer",
		Short: "Run a producer: offer IMAP load on step commands and publish what it measured",
		Long: `Registers in the imapload_producers bucket, listens for step commands on imapload.step and,
for each, runs staggered open-loop IMAP sessions against --imap at its share of the rate,
publishing sample batches to the IMAPLOAD_SAMPLES stream. Scale the fleet by starting more.`,
		Example: `  imapload producer --nats nats://10.0.0.5:4222 --imap mail.example.net:993 --tls \
    --accounts-file accounts.txt --sessions 64
  IMAPLOAD_IMAP=127.0.0.1:1143 IMAPLOAD_ACCOUNTS_TEMPLATE=user%d IMAPLOAD_ACCOUNTS_COUNT=100 \
    IMAPLOAD_ACCOUNTS_PASSWORD_FILE=/run/secrets/imap-password imapload producer`,
		Args: cobra.NoArgs,
		RunE: runProducer,
	}
	addNATSFlags(cmd)
	addProducerFlags(cmd)
	cmd.Flags().String("id", "", "producer id (default <hostname>-<pid>)")
	cmd.Flags().String("imap", "", "IMAP server host:port (required)")
	cmd.Flags().Bool("tls", false, "implicit TLS (IMAPS)")
	cmd.Flags().String("tls-ca", "", "PEM file of the CA to trust for --tls (default: system roots)")
	cmd.Flags().Bool("tls-insecure", false, "with --tls, do not verify the server certificate: anyone on the path can read the passwords (test servers only)")
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
	f.String("accounts-password", "secret", "password of template accounts; prefer --accounts-password-file or env IMAPLOAD_ACCOUNTS_PASSWORD, as ps shows flags (never logged)")
	f.Int("sessions", 32, "IMAP sessions per producer")
	f.Int("sessions-per-account", 2, "concurrent sessions of one account per producer")
	f.Int("queue", 0, "commands waiting for a free session before drops (default 4 × sessions)")
	f.Duration("op-timeout", 0, "our own timeout of one IMAP operation (default 10s)")
	f.Duration("saturation-lag", 0, "schedule-lag P99 above which a producer counts as behind its schedule, voiding the step (default 20ms)")
	f.Duration("flush-interval", 0, "batch interval (default 1s)")
	f.Duration("publish-retry", 0, "how long, per NATS outage, unacknowledged batches are retried before they count as lost (default 2m; 5s while shutting down)")
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
	o.SaturationLag, _ = f.GetDuration("saturation-lag")
	o.FlushInterval, _ = f.GetDuration("flush-interval")
	o.PublishRetry, _ = f.GetDuration("publish-retry")
	o.Reservoir, _ = f.GetInt("reservoir")
	return o, nil
}

// tlsConfig returns the configuration of --tls, nil without it. --tls-ca and
// --tls-insecure without --tls would be ignored in silence, so they are
// usage errors; --tls-insecure is warned about at every start.
func tlsConfig(cmd *cobra.Command, log *slog.Logger) (*tls.Config, error) {
	f := cmd.Flags()
	on, _ := f.GetBool("tls")
	insecure, _ := f.GetBool("tls-insecure")
	ca := flagString(cmd, "tls-ca")
	switch {
	case !on && insecure:
		return nil, usage(errors.New("--tls-insecure needs --tls: it turns off the certificate check of TLS connections"))
	case !on && ca != "":
		return nil, usage(errors.New("--tls-ca needs --tls: it names the CA of TLS connections"))
	case !on:
		return nil, nil
	case insecure:
		log.Warn("producer: --tls-insecure: the IMAP server's certificate is NOT verified; anyone on the network path can " +
			"impersonate the server and read every account's password. Use it for test servers only; --tls-ca trusts a private CA")
	}
	cfg := &tls.Config{InsecureSkipVerify: insecure} //nolint:gosec // an explicit flag for test servers, warned about
	var err error
	cfg.RootCAs, err = caPool(ca)
	return cfg, err
}

// caPool returns the certificates of the PEM file path, nil (the system
// roots) if path is "".
func caPool(path string) (*x509.CertPool, error) {
	if path == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--tls-ca %s: no PEM certificate", path)
	}
	return pool, nil
}

func runProducer(cmd *cobra.Command, _ []string) error {
	if procs, _ := cmd.Flags().GetInt("procs"); procs > 0 {
		runtime.GOMAXPROCS(procs)
	}
	log := logger(cmd)
	tlsCfg, err := tlsConfig(cmd, log)
	if err != nil {
		return err
	}
	o, err := producerOptions(cmd)
	if err != nil {
		return err
	}
	o.ID, o.Addr, o.LocalAddr = flagString(cmd, "id"), flagString(cmd, "imap"), flagString(cmd, "local-addr")
	o.TLS, o.TLSConfig, o.Logger = tlsCfg != nil, tlsCfg, log
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
