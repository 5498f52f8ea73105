package main

import (
	"github.com/imapload/imapload/internal/testkit"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// TestFlagSuggestions: a misspelt flag is refused with the flag meant; an
// unknown command gets cobra's suggestion; both are usage errors.
func TestFlagSuggestions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"producer", "--sesions", "8"}, "unknown flag: --sesions; did you mean --sessions?"},
		{[]string{"ramp", "--rat", "5"}, "did you mean --rate?"},
		{[]string{"seed", "--tsl"}, "did you mean --tls?"},
		{[]string{"seed", "--acounts-password-file", "pw"}, "did you mean --accounts-password-file?"},
		{[]string{"aggregator", "--log-levl", "debug"}, "did you mean --log-level?"}, // the root's
		{[]string{"seed", "--zzzzzz"}, "unknown flag: --zzzzzz (see imapload seed --help)"},
		{[]string{"sed"}, "Did you mean this?\n\tseed"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			_, _, err := runCLI(t.Context(), tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != verdict.ExitUsage {
				t.Errorf("imapload %v: %v (exit %d), want %q (exit %d)", tc.args, err, exitCode(err), tc.want, verdict.ExitUsage)
			}
		})
	}
}

// TestUnknownEnv: every IMAPLOAD_ variable that is no flag of any command
// is named, with the nearest real one when there is one; the variables of
// other commands, of the tests and of deploy/ are not; no value is shown.
func TestUnknownEnv(t *testing.T) {
	env := []string{"PATH=/bin", "IMAPLOAD_SESIONS=8", "IMAPLOAD_SESSIONS=8", "IMAPLOAD_ACOUNTS_PASSWORD=Pw-s3cret",
		"IMAPLOAD_ZZQQXX=1", "IMAPLOAD_RATE=5", "IMAPLOAD_USER_PASSWORD=x", "IMAPLOAD_E2E=1", "IMAPLOAD_LONG=1",
		"IMAPLOAD_DOVECOT_ADDR=127.0.0.1:1", "IMAPLOAD_NKEY_AGGREGATOR=UA", "IMAPLOAD_UID=1000"}
	got := unknownEnv(newRoot(), env)
	want := []string{
		"IMAPLOAD_ACOUNTS_PASSWORD: no such setting; did you mean IMAPLOAD_ACCOUNTS_PASSWORD?",
		"IMAPLOAD_SESIONS: no such setting; did you mean IMAPLOAD_SESSIONS?",
		"IMAPLOAD_ZZQQXX: no such setting (a setting is IMAPLOAD_ and a flag's name, as IMAPLOAD_SESSIONS for --sessions)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("unknownEnv() =\n%q\nwant\n%q", got, want)
	}
}

// TestUnknownEnvWarned: a command run with a misspelt variable warns of it
// on stderr and still runs (here into a NATS that is not there).
func TestUnknownEnvWarned(t *testing.T) {
	t.Setenv("IMAPLOAD_SESIONS", "8")
	out, errOut, err := runCLI(t.Context(), "step", "--nats", "nats://"+testkit.ClosedAddr(t), "--run", "r1", "--step", "1", "--rate", "5", "--duration", "1s")
	if !strings.Contains(errOut, "IMAPLOAD_SESIONS: no such setting; did you mean IMAPLOAD_SESSIONS?") || !strings.Contains(err.Error(), "no NATS server") {
		t.Errorf("imapload version with IMAPLOAD_SESIONS: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
}

// TestEnvNotFlagsComplete: no variable the repository's tests, scripts,
// compose files and manifests read is taken for a typo (a new one must be
// added to envNotFlags).
func TestEnvNotFlagsComplete(t *testing.T) {
	read := []*regexp.Regexp{
		regexp.MustCompile(`(?:Getenv|LookupEnv)\("(IMAPLOAD_[A-Z0-9_]+)"`), // Go
		regexp.MustCompile(`Env\s*=\s*"(IMAPLOAD_[A-Z0-9_]+)"`),             // Go: a constant naming one
		regexp.MustCompile(`\$\{?(IMAPLOAD_[A-Z0-9_]+)`),                    // shell, compose, manifests
		regexp.MustCompile(`(?m)^\s*-?\s*(IMAPLOAD_[A-Z0-9_]+)[:=]`),        // compose and env files, shell assignments
	}
	// Stream names, and a variable embedded's test names as missing on purpose.
	notEnv := []string{messages.StepsStream, messages.SamplesStream, messages.ResultsStream, "IMAPLOAD_NO_SUCH_VARIABLE"}
	var env []string
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return err
		}
		if d.IsDir() || !slices.ContainsFunc([]string{".go", ".sh", ".yml", ".yaml", ".tmpl", "run"}, func(ext string) bool { return strings.HasSuffix(path, ext) }) {
			return nil
		}
		b, err := os.ReadFile(path)
		for _, re := range read {
			for _, m := range re.FindAllSubmatch(b, -1) {
				if name := string(m[1]); !slices.Contains(notEnv, name) {
					env = append(env, name+"=1")
				}
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(env) < 10 {
		t.Fatalf("found %d variables in the repository, want ≥ 10: is the walk from the module's root?", len(env))
	}
	if w := unknownEnv(newRoot(), env); len(w) > 0 {
		t.Errorf("variables the repository reads are warned about; add them to envNotFlags:\n%s", strings.Join(w, "\n"))
	}
}
