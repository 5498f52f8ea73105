package seed_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/seed"
)

// dovecot is the private Dovecot of the environment (see
// testkit.DovecotFromEnv): three accounts at least.
type dovecot struct{ testkit.DovecotEnv }

func dovecotFromEnv(t *testing.T) dovecot { return dovecot{testkit.DovecotFromEnv(t, 3)} }

// accounts are the last n accounts, which the producer's tests use least.
func (d dovecot) accounts(n int) []seed.Account {
	as := make([]seed.Account, n)
	for i := range as {
		as[i] = seed.Account{User: fmt.Sprintf("%s%d", d.Prefix, d.Users-i), Password: d.Password}
	}
	return as
}

// deleteFolders removes the test's folders from every account.
func (d dovecot) deleteFolders(t *testing.T, accts []seed.Account, ts []seed.Target) {
	for _, a := range accts {
		c, err := imapclient.DialInsecure(d.Addr, nil)
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
			o.StartTLS, o.Plain, o.TLSConfig, o.Pipeline = true, true, d.TLSConfig(t), 8
		}},
		{"imaps", func(o *seed.Options) { o.Addr, o.TLS, o.TLSConfig = d.TLSAddr, true, d.TLSConfig(t) }},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			if m.name == "imaps" && d.TLSAddr == "" {
				msg := "IMAPLOAD_DOVECOT_TLS_ADDR is missing; export what deploy/dovecot/start.sh prints"
				if testkit.E2E() {
					t.Fatal(msg + " (IMAPLOAD_E2E=1 requires it)")
				}
				t.Skip(msg)
			}
			tag := fmt.Sprintf("SeedE2E-%x", rand.Uint32())
			ts := []seed.Target{{Folder: tag + "-Archive", Count: 30}, {Folder: tag + "-Sent", Count: 7}}
			o := seed.Options{Addr: d.Addr, Accounts: d.accounts(3), Targets: ts, Source: gen, Concurrency: 3,
				OpTimeout: 30 * time.Second}
			m.edit(&o)
			t.Cleanup(func() { d.deleteFolders(t, o.Accounts, ts) })
			sum, err := run(t, t.Context(), o)
			if err != nil || sum.Messages != 3*37 || sum.Created != 6 {
				t.Fatalf("Run() = %+v, %v; want 111 messages, 6 folders created", sum, err)
			}
			for _, a := range o.Accounts {
				got := status(t, d.Addr, a.User, a.Password, ts)
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
