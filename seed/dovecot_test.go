package seed_test

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/seed"
)

// dovecot is the private Dovecot that deploy/dovecot/start.sh describes in
// the environment (see producer/dovecot_env_test.go).
type dovecot struct {
	addr, tlsAddr, prefix, password, dir string
	users                                int
}

func dovecotFromEnv(t *testing.T) dovecot {
	t.Helper()
	testkit.Require(t, testkit.Dovecot)
	d := dovecot{addr: os.Getenv("IMAPLOAD_DOVECOT_ADDR"), tlsAddr: os.Getenv("IMAPLOAD_DOVECOT_TLS_ADDR"),
		prefix: os.Getenv("IMAPLOAD_DOVECOT_USER_PREFIX"), password: os.Getenv("IMAPLOAD_DOVECOT_PASSWORD"),
		dir: os.Getenv("IMAPLOAD_DOVECOT_DIR")}
	var err error
	d.users, err = strconv.Atoi(os.Getenv("IMAPLOAD_DOVECOT_USERS"))
	if err != nil || d.users < 3 || d.prefix == "" || d.password == "" || d.dir == "" {
		t.Fatalf("IMAPLOAD_DOVECOT_USERS (≥ 3), _USER_PREFIX, _PASSWORD, _DIR: want the output of deploy/dovecot/start.sh")
	}
	return d
}

// accounts are the last n accounts, which the producer's tests use least.
func (d dovecot) accounts(n int) []seed.Account {
	as := make([]seed.Account, n)
	for i := range as {
		as[i] = seed.Account{User: fmt.Sprintf("%s%d", d.prefix, d.users-i), Password: d.password}
	}
	return as
}

func (d dovecot) tlsConfig(t *testing.T) *tls.Config {
	t.Helper()
	pem, err := os.ReadFile(filepath.Join(d.dir, "cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// deleteFolders removes the test's folders from every account.
func (d dovecot) deleteFolders(t *testing.T, accts []seed.Account, ts []seed.Target) {
	for _, a := range accts {
		c, err := imapclient.DialInsecure(d.addr, nil)
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		if err := c.Login(a.User, a.Password).Wait(); err == nil {
			for _, tg := range ts {
				_ = c.Delete(tg.Folder).Wait()
			}
		}
		c.Close()
	}
}

// TestDovecotSeed: seeding folders of their own in three accounts of a real
// Dovecot, over cleartext LOGIN, STARTTLS with AUTHENTICATE PLAIN and
// implicit TLS, reaches the targets that STATUS then reports, and a second
// run appends nothing. The STARTTLS run pipelines APPENDs over LITERAL+.
func TestDovecotSeed(t *testing.T) {
	d := dovecotFromEnv(t)
	tab, err := seed.ParseSizes("1k-8k:8,40k-200k:2")
	if err != nil {
		t.Fatal(err)
	}
	gen := &seed.Generator{Sizes: tab, Seed: 3, Now: time.Now(), Days: 30}
	modes := []struct {
		name string
		edit func(*seed.Options)
	}{
		{"login", func(*seed.Options) {}},
		{"starttls plain pipelined", func(o *seed.Options) {
			o.StartTLS, o.Plain, o.TLSConfig, o.Pipeline = true, true, d.tlsConfig(t), 8
		}},
		{"imaps", func(o *seed.Options) { o.Addr, o.TLS, o.TLSConfig = d.tlsAddr, true, d.tlsConfig(t) }},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			if m.name == "imaps" && d.tlsAddr == "" {
				msg := "IMAPLOAD_DOVECOT_TLS_ADDR is missing; export what deploy/dovecot/start.sh prints"
				if testkit.E2E() {
					t.Fatal(msg + " (IMAPLOAD_E2E=1 requires it)")
				}
				t.Skip(msg)
			}
			tag := fmt.Sprintf("SeedE2E-%x", rand.Uint32())
			ts := []seed.Target{{Folder: tag + "-Archive", Count: 30}, {Folder: tag + "-Sent", Count: 7}}
			o := seed.Options{Addr: d.addr, Accounts: d.accounts(3), Targets: ts, Source: gen, Concurrency: 3,
				OpTimeout: 30 * time.Second}
			m.edit(&o)
			t.Cleanup(func() { d.deleteFolders(t, o.Accounts, ts) })
			sum, err := run(t, t.Context(), o)
			if err != nil || sum.Messages != 3*37 || sum.Created != 6 {
				t.Fatalf("Run() = %+v, %v; want 111 messages, 6 folders created", sum, err)
			}
			for _, a := range o.Accounts {
				got := status(t, d.addr, a.User, a.Password, ts)
				for _, tg := range ts {
					if got[tg.Folder] != tg.Count {
						t.Errorf("STATUS %s of %s: %d messages, want %d", tg.Folder, a.User, got[tg.Folder], tg.Count)
					}
				}
			}
			if sum, err := run(t, t.Context(), o); err != nil || sum.Messages != 0 || sum.Full != 3 {
				t.Errorf("second Run() = %+v, %v; want nothing appended", sum.Stats, err)
			}
		})
	}
}
