package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Distinctive secrets: none may appear in any log, batch, result or file.
var secrets = map[string]string{
	"NATS password":       "nats-Pw-7f3c9e41",
	"wrong NATS password": "natsWrong-Pw-2b8d",
	"IMAP password":       "imap-Pw-Q8x2Lz55",
	"wrong IMAP password": "wrong-Pw-Z9k4Hd",
	"unknown user's pw":   "ghost-Pw-M3n8Rt",
	"malformed line's pw": "leak-Pw-V6c1Wq",
}

// capture gathers every byte the pipeline shows to the outside.
type capture struct {
	mu      sync.Mutex
	sources map[string][]byte
}

func (c *capture) add(name string, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sources[name] = append(c.sources[name], b...)
	c.sources[name] = append(c.sources[name], '\n')
}

// TestSecretsNeverShown runs NATS with user/password auth, the IMAP server,
// a producer whose accounts include wrong passwords and an unknown user, the
// aggregator and the reporter (all at debug log level) through one step, and
// asserts that no password appears in their logs and output, the published
// batches and results, the registry, the report files, or the errors of a
// refused NATS login and of a malformed accounts file.
func TestSecretsNeverShown(t *testing.T) {
	c := &capture{sources: map[string][]byte{}}
	f := startSecretFleet(t, c)
	out, errOut, err := runCLI(context.Background(), "step", "--run", "sec", "--rate", "60", "--duration", "2s", "--wait", "1s", "--log-level", "debug")
	if err != nil {
		t.Fatalf("imapload step = %v\n%s", err, errOut)
	}
	c.add("step output", []byte(out+errOut))
	if r := f.results.step(t, 1, 30*time.Second); !hasLoginFailure(r) {
		t.Errorf("step result errors = %+v, want failed logins (wrong passwords, unknown user)", r.Errors)
	}
	f.results.report(t, 1, 30*time.Second)
	testkit.WaitFor(t, 20*time.Second, "the report files", func() bool {
		_, err := tryReadReport(filepath.Join(f.dir, "report.json"))
		return err == nil
	})
	for _, b := range f.roles {
		if err := b.stop(t, 15*time.Second); err != nil {
			t.Errorf("%s returned %v", b.name, err)
		}
	}
	c.addFailures(t, f.imapAddr, f.natsURL)
	for _, b := range append(f.roles, f.servers...) {
		c.add(b.name+" stdout", []byte(b.stdout.String()))
		c.add(b.name+" stderr", []byte(b.stderr.String()))
	}
	c.addDir(t, f.dir)
	c.check(t)
}

// secretFleet is the pipeline of TestSecretsNeverShown, run in-process.
type secretFleet struct {
	natsURL, imapAddr, dir string
	results                *seenResults
	roles, servers         []*bgCLI
}

// startSecretFleet starts NATS with user/password auth (the password from
// IMAPLOAD_PASSWORD), the IMAP server, a producer, the aggregator and the
// reporter, all logging at debug level, and captures what is published.
func startSecretFleet(t *testing.T, c *capture) *secretFleet {
	t.Helper()
	const user = "imapload"
	natsPw := secrets["NATS password"]
	t.Setenv("IMAPLOAD_PASSWORD", natsPw)
	f := &secretFleet{dir: t.TempDir()}
	natsSrv := startCLI(t, "nats", "nats", "--listen", "127.0.0.1:0", "--store", t.TempDir(), "--user", user, "--log-level", "debug")
	f.natsURL = natsSrv.waitMatch(t, natsURLRe, 15*time.Second)
	credURL := strings.Replace(f.natsURL, "nats://", "nats://"+user+":"+natsPw+"@", 1)
	imapSrv := startCLI(t, "imapserver", "imapserver", "--listen", "127.0.0.1:0", "--users", "8",
		"--user-password", secrets["IMAP password"], "--bcrypt-cost", "4", "--log-level", "debug")
	f.imapAddr = imapSrv.waitMatch(t, imapAddrRe, 15*time.Second)
	f.servers = []*bgCLI{natsSrv, imapSrv}

	nc := connect(t, f.natsURL, nats.UserInfo(user, natsPw))
	f.results = watchResults(t, nc, "sec")
	for _, subj := range []string{messages.SamplesSubjects, messages.ResultsSubjects} {
		subscribe(t, nc, subj, func(m *nats.Msg) { c.add("published "+m.Subject, m.Data) })
	}
	t.Setenv("IMAPLOAD_NATS", credURL) // the aggregator, the reporter and step read it
	f.roles = []*bgCLI{
		startCLI(t, "producer", "producer", "--nats", credURL, "--imap", f.imapAddr, "--id", "sec-p1", "--accounts-file", accountsFile(t),
			"--sessions", "9", "--sessions-per-account", "1", "--log-level", "debug"),
		startCLI(t, "aggregator", "aggregator", "--step-timeout", "5s", "--log-level", "debug"),
		startCLI(t, "reporter", "reporter", "--run", "sec", "--out", f.dir, "--log-level", "debug"),
	}
	awaitProducers(t, nc, "sec-p1")
	c.add("registry", registry(t, nc))
	return f
}

// accountsFile writes six good accounts, two with a wrong password and one
// unknown user.
func accountsFile(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&b, "user%d:%s\n", i, secrets["IMAP password"])
	}
	b.WriteString("user7:" + secrets["wrong IMAP password"] + "\nuser8:" + secrets["wrong IMAP password"] + "\n")
	b.WriteString("ghost:" + secrets["unknown user's pw"] + "\n")
	path := filepath.Join(t.TempDir(), "accounts.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// registry returns every producer entry of the registry bucket.
func registry(t *testing.T, nc *nats.Conn) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	js, _ := jetstream.New(nc)
	kv, err := js.KeyValue(ctx, messages.ProducersBucket)
	if err != nil {
		t.Fatalf("registry: %v", err)
	}
	keys, _ := kv.Keys(ctx)
	var out []byte
	for _, k := range keys {
		if e, err := kv.Get(ctx, k); err == nil {
			out = append(out, e.Value()...)
		}
	}
	return out
}

func hasLoginFailure(r messages.StepResult) bool {
	for _, e := range r.Errors {
		if e.Phase == "login" && e.Count > 0 {
			return true
		}
	}
	return false
}

// addFailures captures the errors of a producer refused by NATS and of a
// producer given an accounts file with a malformed line.
func (c *capture) addFailures(t *testing.T, imapAddr, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	wrong := strings.Replace(url, "nats://", "nats://imapload:"+secrets["wrong NATS password"]+"@", 1)
	out, errOut, err := runCLI(ctx, "producer", "--nats", wrong, "--imap", imapAddr, "--accounts-count", "1", "--log-level", "debug")
	if err == nil {
		t.Fatalf("producer with a wrong NATS password = nil, want an authorization error")
	}
	c.add("refused producer", []byte(err.Error()+"\n"+out+errOut))
	path := filepath.Join(t.TempDir(), "bad-accounts.txt")
	if err := os.WriteFile(path, []byte("user1:x\n:"+secrets["malformed line's pw"]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, err = runCLI(ctx, "producer", "--nats", unreachableNATS, "--imap", imapAddr, "--accounts-file", path)
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("producer with a malformed accounts file = %v, want an error naming line 2", err)
	}
	c.add("malformed accounts", []byte(errorText(err)+"\n"+out+errOut))
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// addDir captures every report file.
func (c *capture) addDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		t.Fatalf("report dir %s: %d files, %v", dir, len(entries), err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		c.add("report file "+e.Name(), b)
	}
}

// check fails for every secret found in any source, and if a source that
// must have content is empty (the check would prove nothing).
func (c *capture) check(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, must := range []string{"published imapload.samples.sec.1.sec-p1", "published imapload.results.sec", "producer stderr", "registry", "refused producer"} {
		if len(bytes.TrimSpace(c.sources[must])) == 0 {
			t.Errorf("nothing captured from %s", must)
		}
	}
	for source, b := range c.sources {
		for name, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s shows the %s", source, name)
			}
		}
	}
}
