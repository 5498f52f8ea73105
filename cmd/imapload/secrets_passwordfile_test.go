package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/verdict"
)

// fileSecret is the content of the secret files of these tests.
const fileSecret = "file-Pw-4Jq8Ns2"

// TestPasswordFile sets every secret flag from its -file sibling, given as a
// flag or in the environment: "FILE" in args and env stands for the path of a
// file holding content.
func TestPasswordFile(t *testing.T) {
	tests := []struct {
		name, command, content string
		args                   []string
		env                    map[string]string
		want                   map[string]string // flag values after configure
		wantErr                error             // errors.Is; usage errors: errUsage
		wantErrText            string
	}{
		{name: "trailing newline trimmed", command: "producer", content: fileSecret + "\n", args: []string{"--accounts-password-file", "FILE"},
			want: map[string]string{"accounts-password": fileSecret}},
		{name: "CRLF trimmed", command: "producer", content: fileSecret + "\r\n", args: []string{"--accounts-password-file", "FILE"},
			want: map[string]string{"accounts-password": fileSecret}},
		{name: "no newline", command: "producer", content: fileSecret, args: []string{"--accounts-password-file", "FILE"},
			want: map[string]string{"accounts-password": fileSecret}},
		{name: "spaces kept", command: "producer", content: " a b \n", args: []string{"--accounts-password-file", "FILE"},
			want: map[string]string{"accounts-password": " a b "}},
		{name: "file from the environment", command: "producer", content: fileSecret + "\n", env: map[string]string{"IMAPLOAD_ACCOUNTS_PASSWORD_FILE": "FILE"},
			want: map[string]string{"accounts-password": fileSecret}},
		{name: "password from the environment", command: "producer", env: map[string]string{"IMAPLOAD_ACCOUNTS_PASSWORD": fileSecret},
			want: map[string]string{"accounts-password": fileSecret}},
		{name: "file flag beats the password variable", command: "producer", content: fileSecret, args: []string{"--accounts-password-file", "FILE"},
			env: map[string]string{"IMAPLOAD_ACCOUNTS_PASSWORD": "env-pw"}, want: map[string]string{"accounts-password": fileSecret}},
		{name: "password flag beats the file variable", command: "producer", content: "file-pw", args: []string{"--accounts-password", fileSecret},
			env: map[string]string{"IMAPLOAD_ACCOUNTS_PASSWORD_FILE": "FILE"}, want: map[string]string{"accounts-password": fileSecret}},
		{name: "both flags", command: "producer", content: fileSecret, args: []string{"--accounts-password", "x", "--accounts-password-file", "FILE"},
			wantErr: errUsage, wantErrText: "--accounts-password or --accounts-password-file, not both"},
		{name: "both variables", command: "producer", content: fileSecret,
			env:     map[string]string{"IMAPLOAD_ACCOUNTS_PASSWORD": "x", "IMAPLOAD_ACCOUNTS_PASSWORD_FILE": "FILE"},
			wantErr: errUsage, wantErrText: "IMAPLOAD_ACCOUNTS_PASSWORD_FILE"},
		{name: "missing file", command: "producer", args: []string{"--accounts-password-file", "/nonexistent/pw"},
			wantErr: os.ErrNotExist, wantErrText: "--accounts-password-file"},
		{name: "empty file", command: "producer", content: "\n", args: []string{"--accounts-password-file", "FILE"}, wantErr: errEmptySecret},
		{name: "two lines", command: "producer", content: fileSecret + "\nuser2:" + fileSecret + "\n", args: []string{"--accounts-password-file", "FILE"},
			wantErr: errSecretLines},
		{name: "demo accounts", command: "demo", content: fileSecret, args: []string{"--accounts-password-file", "FILE"},
			want: map[string]string{"accounts-password": fileSecret, "user-password": "secret"}},
		{name: "demo server", command: "demo", content: fileSecret, env: map[string]string{"IMAPLOAD_USER_PASSWORD_FILE": "FILE"},
			want: map[string]string{"user-password": fileSecret, "accounts-password": "secret"}},
		{name: "imapserver", command: "imapserver", content: fileSecret, args: []string{"--user-password-file", "FILE"},
			want: map[string]string{"user-password": fileSecret}},
		{name: "nats server", command: "nats", content: fileSecret, env: map[string]string{"IMAPLOAD_PASSWORD_FILE": "FILE"},
			want: map[string]string{"password": fileSecret}},
		{name: "nats client", command: "aggregator", content: fileSecret, args: []string{"--nats-user", "u", "--nats-password-file", "FILE"},
			want: map[string]string{"nats-user": "u", "nats-password": fileSecret}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := secretFile(t, tt.content)
			for k, v := range tt.env {
				t.Setenv(k, strings.ReplaceAll(v, "FILE", path))
			}
			cmd, err := configured(t, tt.command, replaceAll(tt.args, "FILE", path)...)
			checkConfigureErr(t, err, tt.wantErr, tt.wantErrText)
			for name, want := range tt.want {
				if got := cmd.Flag(name).Value.String(); got != want {
					t.Errorf("%s %v: --%s = %q, want %q", tt.command, tt.args, name, got, want)
				}
			}
		})
	}
}

// errUsage stands for any usage error (exit code 2) in test tables.
var errUsage = errors.New("a usage error")

func checkConfigureErr(t *testing.T, err, want error, text string) {
	t.Helper()
	switch {
	case want == nil && err != nil:
		t.Fatalf("configure() = %v, want nil", err)
	case want == errUsage && exitCode(err) != verdict.ExitUsage:
		t.Fatalf("configure() = %v (exit %d), want a usage error", err, exitCode(err))
	case want != nil && want != errUsage && (!errors.Is(err, want) || exitCode(err) == verdict.ExitUsage):
		t.Fatalf("configure() = %v, want %v (not a usage error)", err, want)
	case err != nil && strings.Contains(err.Error(), fileSecret):
		t.Errorf("configure() = %v shows the secret", err)
	case err != nil && !strings.Contains(err.Error(), text):
		t.Errorf("configure() = %v, want it to contain %q", err, text)
	}
}

// configured returns the subcommand name of a new root with args parsed and
// completed as its PersistentPreRunE does.
func configured(t *testing.T, name string, args ...string) (*cobra.Command, error) {
	t.Helper()
	cmd, _, err := newRoot().Find([]string{name})
	if err != nil || cmd.Name() != name {
		t.Fatalf("Find(%s) = %v, %v", name, cmd, err)
	}
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("%s: ParseFlags(%v) = %v", name, args, err)
	}
	return cmd, configure(cmd.Flags())
}

// configuredNATS returns the NATS flags of a networked command with args
// parsed and completed as its PersistentPreRunE does.
func configuredNATS(t *testing.T, args ...string) (*natsConfig, error) {
	t.Helper()
	var c natsConfig
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	c.add(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("Parse(%v) = %v", args, err)
	}
	return &c, configure(fs)
}

// secretFile writes content into a private file, "" if content is.
func secretFile(t *testing.T, content string) string {
	t.Helper()
	if content == "" {
		return ""
	}
	path := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func replaceAll(args []string, old, new string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, old, new)
	}
	return out
}

// TestNATSPasswordFile connects to NATS with user/password auth through
// --nats-user and --nats-password-file, and checks the ways to get them wrong.
func TestNATSPasswordFile(t *testing.T) {
	ns := startNATS(t, &embedded.NATSOptions{User: "imapload", Password: fileSecret})
	good, wrong := secretFile(t, fileSecret+"\n"), secretFile(t, "wrong-Pw-8Hs3\n")
	tests := []struct {
		name    string
		args    []string
		wantErr error
	}{
		{name: "user and password file", args: []string{"--nats", ns.ClientURL(), "--nats-user", "imapload", "--nats-password-file", good}},
		{name: "wrong password", args: []string{"--nats", ns.ClientURL(), "--nats-user", "imapload", "--nats-password-file", wrong}, wantErr: nats.ErrAuthorization},
		{name: "user without password", args: []string{"--nats", ns.ClientURL(), "--nats-user", "imapload"}, wantErr: errUsage},
		{name: "password without user", args: []string{"--nats", ns.ClientURL(), "--nats-password-file", good}, wantErr: errUsage},
		{name: "credentials twice", args: []string{"--nats", strings.Replace(ns.ClientURL(), "//", "//imapload:x@", 1),
			"--nats-user", "imapload", "--nats-password-file", good}, wantErr: errUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := configuredNATS(t, tt.args...)
			if err != nil {
				t.Fatalf("configure() = %v", err)
			}
			nc, err := c.connect("test")
			if err == nil {
				nc.Close()
			}
			checkConfigureErr(t, err, tt.wantErr, "")
			if err != nil && strings.Contains(err.Error(), "wrong-Pw-8Hs3") {
				t.Errorf("connect() = %v shows the password", err)
			}
		})
	}
}

// TestIMAPServerPasswordFile seeds the test IMAP server's accounts with the
// password of IMAPLOAD_USER_PASSWORD_FILE, and a producer reads the same one
// from --accounts-password-file.
func TestIMAPServerPasswordFile(t *testing.T) {
	path := secretFile(t, fileSecret+"\n")
	t.Setenv("IMAPLOAD_USER_PASSWORD_FILE", path)
	srv := startCLI(t, "imapserver", "imapserver", "--users", "2", "--listen", "127.0.0.1:0")
	addr := srv.waitMatch(t, imapAddrRe, 15*time.Second)
	c, err := imapclient.DialInsecure(addr, nil)
	if err != nil {
		t.Fatalf("DialInsecure(%s): %v", addr, err)
	}
	defer c.Close()
	if err := c.Login("user1", "secret").Wait(); err == nil {
		t.Errorf("Login(user1, the default password) = nil, want a failure")
	}
	if err := c.Login("user1", fileSecret).Wait(); err != nil {
		t.Errorf("Login(user1, the file's password) = %v", err)
	}
	if err := srv.stop(t, 10*time.Second); err != nil {
		t.Errorf("imapserver returned %v", err)
	}
	if out := srv.stdout.String() + srv.stderr.String(); strings.Contains(out, fileSecret) {
		t.Errorf("imapserver output shows the password:\n%s", out)
	}
}

// TestSecretsInNATSURLErrors gives a producer NATS URLs whose passwords make
// them unparseable or mis-parsed; its error shows no part of them.
func TestSecretsInNATSURLErrors(t *testing.T) {
	for _, url := range []string{
		"alice:Secret1-Xq@127.0.0.1:1",                             // no scheme
		"nats://alice:Secret1%zz-Xq@127.0.0.1:1",                   // a bad escape
		"nats://alice:Secret1#-Xq@127.0.0.1:1",                     // a fragment
		"nats://alice:Secret1-Xq@127.0.0.1:1",                      // the usual form
		"nats://a:Secret1-Xq@127.0.0.1:1,b:Secret1-Xq@127.0.0.1:2", // a list
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		out, errOut, err := runCLI(ctx, "producer", "--nats", url, "--imap", "127.0.0.1:1", "--procs", "0", "--log-level", "debug")
		cancel()
		if err == nil {
			t.Fatalf("producer --nats %s = nil, want a connection error", url)
		}
		for _, s := range []string{"Secret1", "alice", "-Xq"} {
			if strings.Contains(err.Error()+out+errOut, s) {
				t.Errorf("producer --nats %s: %q shows %q\n%s%s", url, err, s, out, errOut)
			}
		}
	}
}

// TestEveryPasswordFlagHasAFile: a flag that holds a password, on any
// command, has a -file sibling (add it to secretFlags), so that no secret has
// to be given where the process list shows it.
func TestEveryPasswordFlagHasAFile(t *testing.T) {
	for _, c := range newRoot().Commands() {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if !strings.Contains(f.Name, "password") || strings.HasSuffix(f.Name, "-file") {
				return
			}
			if c.Flags().Lookup(f.Name+"-file") == nil {
				t.Errorf("imapload %s --%s has no --%s-file", c.Name(), f.Name, f.Name)
			}
		})
	}
}
