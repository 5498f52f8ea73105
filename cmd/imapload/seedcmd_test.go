package main

import (
	"context"
	"github.com/imapload/imapload/internal/testkit"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/verdict"
)

// TestSeedCommand: `imapload seed` states its plan and size table, fills
// the embedded server's accounts, and a second run says it appended
// nothing. The password is never printed.
func TestSeedCommand(t *testing.T) {
	s, err := embedded.StartIMAP(&embedded.IMAPOptions{Users: 3, Password: "s3cret-pw"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pw := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(pw, []byte("s3cret-pw\n"), 0o600)
	args := []string{"seed", "--imap", s.Addr(), "--accounts-count", "3", "--accounts-password-file", pw,
		"--messages", "12", "--folders", "INBOX:3,Archive:1", "--sizes", "1k-2k:9,40k:1", "--concurrency", "2"}
	out, errOut, err := runCLI(t.Context(), args...)
	if err != nil {
		t.Fatalf("imapload seed: %v\n%s%s", err, out, errOut)
	}
	for _, want := range []string{"1k-2k 90%, 40k 10%", "3 accounts, each to hold INBOX 9, Archive 3; 2 at once"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	// INBOX starts with the server's 5 seed messages: 3 × (4 + 3) appended.
	if want := "accounts 3/3 done (0 failed), 21 messages"; !strings.Contains(out, want) {
		t.Errorf("stdout lacks %q:\n%s", want, out)
	}
	out, errOut, err = runCLI(t.Context(), args...)
	if err != nil || !strings.Contains(out, "3 accounts already held their targets: nothing appended") {
		t.Errorf("second imapload seed: %v\n%s", err, out)
	}
	if strings.Contains(out+errOut, "s3cret-pw") {
		t.Error("the output shows the password")
	}
}

// TestSeedInterrupted: a seed whose context has ended says what it did and
// how to continue, and fails.
func TestSeedInterrupted(t *testing.T) {
	s, err := embedded.StartIMAP(&embedded.IMAPOptions{Users: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, _, err = runCLI(ctx, "seed", "--imap", s.Addr(), "--accounts-count", "2", "--messages", "3")
	if err == nil || !strings.Contains(err.Error(), "run the same command again to continue") || exitCode(err) != verdict.ExitError {
		t.Errorf("imapload seed, interrupted: %v (exit %d)", err, exitCode(err))
	}
}

// TestSeedFailsFast: a mistake every account would repeat — a wrong
// password, a TLS port dialled in clear text, a closed port — ends seed
// once, before any APPEND and any progress line, with the mistake's fix
// and its exit code; the password is never printed.
func TestSeedFailsFast(t *testing.T) {
	t.Parallel()
	plain, err := embedded.StartIMAP(&embedded.IMAPOptions{Users: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plain.Close() })
	implicit, err := embedded.StartIMAP(&embedded.IMAPOptions{Users: 3, TLS: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { implicit.Close() })
	closed := testkit.ClosedAddr(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
		says []string
	}{
		{"wrong password", []string{"--imap", plain.Addr(), "--accounts-password", "Wr0ngPw"}, verdict.ExitUsage,
			[]string{"login was refused", `"user1"`, "check the password"}},
		{"tls port without --tls", []string{"--imap", implicit.Addr()}, verdict.ExitUsage,
			[]string{"speaks TLS", "add --tls"}},
		{"plain port under --tls", []string{"--imap", plain.Addr(), "--tls"}, verdict.ExitUsage,
			[]string{"speaks plain IMAP", "drop --tls, or use --starttls"}},
		{"closed port", []string{"--imap", closed}, verdict.ExitError,
			[]string{"nothing listens", "is the server running"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"seed", "--accounts-count", "3", "--messages", "100", "--progress", "100ms"}, tc.args...)
			out, errOut, err := runCLI(t.Context(), args...)
			if err == nil || exitCode(err) != tc.code {
				t.Fatalf("imapload seed %v: %v (exit %d), want exit %d", tc.args, err, exitCode(err), tc.code)
			}
			for _, want := range tc.says {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("imapload seed %v: %q, want it to say %q", tc.args, err, want)
				}
			}
			if strings.Contains(out+errOut, "done (") || strings.Contains(out, "accounts failed") {
				t.Errorf("imapload seed %v printed progress or account failures; want one error:\n%s%s", tc.args, out, errOut)
			}
			if strings.Contains(out+errOut+err.Error(), "Wr0ngPw") {
				t.Error("the output shows the password")
			}
		})
	}
	t.Cleanup(func() { // after the parallel cases
		if st := plain.Stats(); st.CommandsByName["APPEND"] != 0 || st.LoginsFailed != 1 {
			t.Errorf("server saw %d APPENDs and %d failed logins, want 0 and 1 (one check, then nothing)", st.CommandsByName["APPEND"], st.LoginsFailed)
		}
	})
}

func TestSeedFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no server", nil, "--imap is required"},
		{"bad sizes", []string{"--sizes", "8k-2k:1"}, "--sizes: seed: bad size table"},
		{"bad folders", []string{"--folders", "INBOX,INBOX"}, `folder "INBOX" listed twice`},
		{"both TLS modes", []string{"--tls", "--starttls"}, "choose one"},
		{"bad auth", []string{"--auth", "cram"}, `--auth "cram"`},
		{"negative messages", []string{"--messages", "-1"}, "--messages -1"},
		{"no concurrency", []string{"--concurrency", "0"}, "--concurrency 0"},
		{"missing mbox", []string{"--imap", "127.0.0.1:1", "--mbox", "/nonexistent/x.mbox"}, "--mbox: seed: open /nonexistent/x.mbox"},
		{"no progress interval", []string{"--progress", "0s"}, "--progress 0s: want a duration > 0"},
		{"sizes with mbox", []string{"--mbox", "x.mbox", "--sizes", "4k:1"}, "--sizes, --seed and --days apply to generated mail only"},
		{"insecure without TLS", []string{"--imap", "127.0.0.1:1", "--tls-insecure"}, "--tls-insecure needs --tls"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runCLI(t.Context(), append([]string{"seed"}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("imapload seed %v: %v, want an error containing %q", tt.args, err, tt.want)
			}
		})
	}
}
