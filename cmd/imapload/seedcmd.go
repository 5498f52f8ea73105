package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/imapload/imapload/producer"
	"github.com/imapload/imapload/seed"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func seedCmd(g *globalFlags) *cobra.Command {
	c := &seedConfig{}
	return bind(&cobra.Command{
		Use:   "seed",
		Short: "Fill accounts with mail before a run: folders, a target count, realistic sizes",
		Long: `Logs in to every account, counts what each folder holds (STATUS MESSAGES), creates missing
folders and APPENDs only the difference to the target, so a second run appends nothing and an
interrupted one (Ctrl-C) continues where it stopped. Messages are generated (RFC 5322, dates
spread over --days, base64 attachments from 32 KiB, sizes drawn from --sizes, repeatable with
--seed) or taken from an mbox file (--mbox, cycled when it holds fewer than needed).
First the first account logs in once: a wrong port, TLS mode, certificate or password ends
the command at once, naming the fix (exit 2; exit 1 when the server cannot be reached).`,
		Example: `  imapload seed --imap 127.0.0.1:143 --accounts-template user%d --accounts-count 100 \
    --accounts-password-file pw.txt --messages 1000
  imapload seed --imap mail.example.net:993 --tls --accounts-file accounts.txt \
    --folders INBOX:70,Archive:20,Sent=50 --sizes 2k-8k:70,8k-64k:20,64k-1m:8,1m-8m:2
  imapload seed --imap 127.0.0.1:143 --starttls --tls-ca ca.pem --mbox ~/mail/archive.mbox --messages 500
  imapload seed --imap 127.0.0.1:143 --lmtp 127.0.0.1:24 --folders INBOX --messages 200`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSeed(cmd, c, g.logger(cmd)) },
	}, c)
}

// seedConfig is the configuration of `imapload seed`.
type seedConfig struct {
	imapConnFlags
	accountFlags
	Auth        string        // --auth: login or plain
	LMTP        string        // --lmtp: deliver INBOX's messages by LMTP to host:port
	Messages    int           // --messages per account, shared by the folders with shares
	Folders     string        // --folders: NAME[:SHARE] or NAME=COUNT, comma-separated
	Sizes       string        // --sizes: the weighted size table
	Seed        uint64        // --seed of the generated mail
	Days        int           // --days the dates go back
	Concurrency int           // --concurrency: accounts filled at once
	Pipeline    int           // --pipeline: APPENDs in flight per connection
	Mbox        string        // --mbox: messages from this file instead of generated ones
	MboxMax     int           // --mbox-max-message in MiB
	OpTimeout   time.Duration // --op-timeout of one command
	Progress    time.Duration // --progress: interval of the progress lines

	folders seed.Folders // parsed by validate
	sizes   seed.Sizes
}

// Defaults of the flags of generated mail.
const (
	defaultSeedSeed = 1
	defaultSeedDays = 365
)

func (c *seedConfig) add(fs *pflag.FlagSet) {
	c.imapConnFlags.add(fs)
	c.accountFlags.add(fs)
	authVar(fs, &c.Auth, "")
	fs.StringVar(&c.LMTP, "lmtp", "", "deliver INBOX's messages by LMTP (RFC 2033) to this host:port, as mail arrives, instead of APPENDing them (other folders are still APPENDed)")
	fs.IntVar(&c.Messages, "messages", 1000, "messages per account, split over the folders by their shares")
	fs.StringVar(&c.Folders, "folders", seed.DefaultFolders, "folders and their shares of --messages (NAME:SHARE), or a count of their own (NAME=COUNT); created if missing")
	fs.StringVar(&c.Sizes, "sizes", seed.DefaultSizes, "size table of generated mail: MIN-MAX:WEIGHT ranges, sizes with k (KiB) or m (MiB)")
	fs.Uint64Var(&c.Seed, "seed", defaultSeedSeed, "seed of the generated mail: the same seed gives the same messages")
	fs.IntVar(&c.Days, "days", defaultSeedDays, "dates of generated mail go back this many days")
	fs.IntVar(&c.Concurrency, "concurrency", 4, "accounts filled at once, one connection each")
	fs.IntVar(&c.Pipeline, "pipeline", 1, "APPENDs a connection sends before it waits for an answer; more than 1 saves round trips to a distant server (on loopback it measured no gain)")
	fs.StringVar(&c.Mbox, "mbox", "", "take the messages from this mbox file (mboxo or mboxrd) instead of generating them; cycled if it holds fewer")
	fs.IntVar(&c.MboxMax, "mbox-max-message", 64, "largest message read from --mbox, in MiB: a larger one is an error")
	fs.DurationVar(&c.OpTimeout, "op-timeout", 0, "timeout of one IMAP command, a whole APPEND included (default 2m)")
	fs.DurationVar(&c.Progress, "progress", time.Second, "interval of the progress lines on stderr")
}

func (c *seedConfig) validate() error {
	var ferr, serr error
	c.folders, ferr = seed.ParseFolders(c.Folders)
	if c.Mbox == "" {
		c.sizes, serr = seed.ParseSizes(c.Sizes)
	}
	return errors.Join(flagErrors([]error{
		c.accountFlags.check(), checkAuth(c.Auth), checkTLSMode(c.TLS, c.StartTLS),
		checkInt("messages", c.Messages, atLeast(0)), checkInt("days", c.Days, atLeast(1)),
		checkInt("concurrency", c.Concurrency, between(1, 10_000)), checkInt("pipeline", c.Pipeline, between(1, 1000)),
		checkInt("mbox-max-message", c.MboxMax, between(1, 1024)),
		checkDuration("op-timeout", c.OpTimeout), checkProgressInterval(c.Progress),
		flagError("folders", ferr), flagError("sizes", serr), c.checkMboxAlone(), checkLMTP(c.LMTP),
	}), checkIMAP(c.IMAP))
}

// checkMboxAlone refuses the flags of generated mail with --mbox, which
// would ignore them in silence.
func (c *seedConfig) checkMboxAlone() error {
	if c.Mbox != "" && (c.Sizes != seed.DefaultSizes || c.Seed != defaultSeedSeed || c.Days != defaultSeedDays) {
		return errors.New("--mbox takes the messages as they are: --sizes, --seed and --days apply to generated mail only")
	}
	return nil
}

// checkLMTP checks --lmtp's host:port.
func checkLMTP(addr string) error {
	if _, _, err := net.SplitHostPort(addr); addr != "" && err != nil {
		return fmt.Errorf("--lmtp %q: want host:port, e.g. 127.0.0.1:24", addr)
	}
	return nil
}

// checkProgressInterval refuses an interval the progress ticker cannot tick at.
func checkProgressInterval(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("--progress %s: want a duration > 0", d)
	}
	return nil
}

// flagError names the flag whose value err refuses.
func flagError(name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("--%s: %w", name, err)
}

func runSeed(cmd *cobra.Command, c *seedConfig, log *slog.Logger) error {
	o, closeSrc, err := c.options(cmd.ErrOrStderr(), log)
	if err != nil {
		return err
	}
	defer closeSrc()
	s, err := seed.New(o)
	if err != nil {
		return err
	}
	a := o.Accounts[0]
	if err := c.checkServer(cmd.Context(), o.TLSConfig, c.Auth, producer.Account{User: a.User, Password: a.Password}); err != nil && cmd.Context().Err() == nil {
		return err // a mistake every account would repeat: named once, before any APPEND
	}
	stop := startProgress(cmd.ErrOrStderr(), s, c.Progress)
	sum, err := s.Run(cmd.Context())
	stop()
	printSeedSummary(cmd.OutOrStdout(), sum)
	return seedError(sum, err)
}

// options returns the seeder's options and what closes its source; it
// reads the accounts and indexes the mbox, and states the plan on w.
func (c *seedConfig) options(w io.Writer, log *slog.Logger) (seed.Options, func(), error) {
	tlsCfg, err := c.tlsConfig(log, "seed")
	if err != nil {
		return seed.Options{}, nil, err
	}
	accts, err := c.accounts()
	if err != nil {
		return seed.Options{}, nil, err
	}
	src, closeSrc, err := c.source(w)
	if err != nil {
		return seed.Options{}, nil, err
	}
	o := seed.Options{Addr: c.IMAP, LMTPAddr: c.LMTP, TLS: c.TLS, StartTLS: c.StartTLS, TLSConfig: tlsCfg, LocalAddr: c.LocalAddr,
		Plain: c.Auth == producer.AuthPlain, Accounts: seedAccounts(accts), Targets: c.folders.Targets(c.Messages),
		Source: src, Concurrency: c.Concurrency, Pipeline: c.Pipeline, OpTimeout: c.OpTimeout}
	printSeedPlan(w, o)
	return o, closeSrc, nil
}

// source returns the generator, or the indexed mbox and its Close.
func (c *seedConfig) source(w io.Writer) (seed.Source, func(), error) {
	if c.Mbox == "" {
		fmt.Fprintf(w, "seed: sizes %s\n", c.sizes.Describe())
		return &seed.Generator{Sizes: c.sizes, Seed: c.Seed, Now: time.Now(), Days: c.Days}, func() {}, nil
	}
	m, err := seed.OpenMbox(c.Mbox, c.MboxMax<<20)
	if err != nil {
		return nil, nil, fmt.Errorf("--mbox: %w", err)
	}
	fmt.Fprintf(w, "seed: messages from %s: %d, %s (cycled when a folder needs more)\n", c.Mbox, m.Len(), megabytes(m.Bytes()))
	return m, func() { m.Close() }, nil
}

func seedAccounts(as []producer.Account) []seed.Account {
	out := make([]seed.Account, len(as))
	for i, a := range as {
		out[i] = seed.Account{User: a.User, Password: a.Password}
	}
	return out
}

// startProgress prints a progress line on w every interval until stop.
func startProgress(w io.Writer, s *seed.Seeder, interval time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				fmt.Fprintln(w, "seed: "+progressLine(s.Stats()))
			}
		}
	}()
	return func() { cancel(); <-done }
}
