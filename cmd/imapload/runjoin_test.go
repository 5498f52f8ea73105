package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/internal/testkit/natstest"
	"github.com/imapload/imapload/pipeline"
	"github.com/spf13/pflag"
)

// TestRunJoinCommand: the producer command printed for another host carries
// the run's producer flags as given, never a secret: a password given by
// value becomes its -file flag with a placeholder and a note; the run's own
// flags (--producers, --rates, --listen) are left out.
func TestRunJoinCommand(t *testing.T) {
	c := newRunConfig()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	c.add(fs)
	err := fs.Parse([]string{"--imap", "mail.example.net:993", "--tls", "--tls-ca", "/etc/ca dir/ca.pem", "--accounts-count", "7",
		"--accounts-password", "Hunter2pw", "--sessions", "9", "--producers", "3", "--rates", "10,20", "--listen", "0.0.0.0:4222"})
	if err != nil {
		t.Fatal(err)
	}
	line, notes := joinCommand(fs, "nats://h:4222", "/s/remote-1.nk", "remote-1")
	want := "imapload producer --nats nats://h:4222 --nats-nkey /s/remote-1.nk --id remote-1 " +
		"--accounts-count 7 --accounts-password-file ACCOUNTS_PASSWORD_FILE --imap mail.example.net:993 --sessions 9 --tls --tls-ca '/etc/ca dir/ca.pem'"
	if line != want {
		t.Errorf("joinCommand() =\n  %s\nwant\n  %s", line, want)
	}
	if strings.Contains(line+strings.Join(notes, ""), "Hunter2pw") {
		t.Errorf("joinCommand() printed the password: %s %v", line, notes)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "ACCOUNTS_PASSWORD_FILE: a file holding --accounts-password") {
		t.Errorf("joinCommand() notes = %q, want one naming the password file's placeholder", notes)
	}
}

// TestRunJoinCommandPasswordFile: a password read from its file (which
// sets the password flag too) is passed on by the file's path alone.
func TestRunJoinCommandPasswordFile(t *testing.T) {
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte("Hunter2pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := newRunConfig()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	c.add(fs)
	if err := fs.Parse([]string{"--imap", "mail:143", "--accounts-password-file", pw}); err != nil {
		t.Fatal(err)
	}
	if err := configure(fs); err != nil {
		t.Fatal(err)
	}
	line, notes := joinCommand(fs, "nats://h:4222", "/s/remote-1.nk", "remote-1")
	if want := " --accounts-password-file " + pw + " --imap mail:143"; !strings.HasSuffix(line, want) || len(notes) != 0 || strings.Contains(line, "Hunter2pw") {
		t.Errorf("joinCommand() = %s, notes %q; want it to end with %q, no note, no password", line, notes, want)
	}
}

// TestRunOnFleet: `run --nats URL` on a NATS where an aggregator already
// consumes says so and starts none, and its step is pooled by the fleet's.
func TestRunOnFleet(t *testing.T) {
	ns, nc := natstest.Start(t)
	startCLI(t, "aggregator", "aggregator", "--nats", ns.ClientURL())
	testkit.WaitFor(t, time.Minute, "the fleet's aggregator to consume", func() bool {
		consuming, err := pipeline.AggregatorConsuming(context.Background(), nc)
		return err == nil && consuming
	})
	srv, err := embedded.StartIMAP(&embedded.IMAPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, _, err := runCLI(ctx, append([]string{"run", "--nats", ns.ClientURL(), "--imap", srv.Addr(), "--producers", "1", "--out", ""}, runShortArgs...)...)
	if !strings.Contains(out, "an aggregator already consumes its batches, so this run started none") || !strings.Contains(out, "step 1 done: ") {
		t.Errorf("run --nats = %v; want it to use the fleet's aggregator and finish its step\n%s", err, out)
	}
}
