package producer_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/internal/testkit/natstest"
	"github.com/imapload/imapload/producer"
)

// dovecot is a private Dovecot described by the environment that
// deploy/dovecot/start.sh prints.
type dovecot struct {
	addr     string // IMAPLOAD_DOVECOT_ADDR, 127.0.0.1:port (cleartext IMAP)
	prefix   string // IMAPLOAD_DOVECOT_USER_PREFIX, accounts are prefix1..prefixN
	users    int    // IMAPLOAD_DOVECOT_USERS
	password string // IMAPLOAD_DOVECOT_PASSWORD, the same for every account
	dir      string // IMAPLOAD_DOVECOT_DIR, holding start.sh's cert.pem (STARTTLS)
}

// dovecotFromEnv returns the Dovecot the environment names. Without one the
// test is skipped, or fails when IMAPLOAD_E2E=1 demands the end-to-end suite.
func dovecotFromEnv(t *testing.T) dovecot {
	t.Helper()
	d := dovecot{
		addr:     os.Getenv("IMAPLOAD_DOVECOT_ADDR"),
		prefix:   os.Getenv("IMAPLOAD_DOVECOT_USER_PREFIX"),
		password: os.Getenv("IMAPLOAD_DOVECOT_PASSWORD"),
		dir:      os.Getenv("IMAPLOAD_DOVECOT_DIR"),
	}
	testkit.Require(t, testkit.Dovecot)
	users, err := strconv.Atoi(os.Getenv("IMAPLOAD_DOVECOT_USERS"))
	if err != nil || users < 1 || d.prefix == "" || d.password == "" {
		t.Fatalf("IMAPLOAD_DOVECOT_USERS %q, _USER_PREFIX %q, _PASSWORD set: %v; want the output of deploy/dovecot/start.sh",
			os.Getenv("IMAPLOAD_DOVECOT_USERS"), d.prefix, d.password != "")
	}
	d.users = users
	return d
}

// options are a producer's options against Dovecot, with every account's
// password set to password, logging at debug level to logs.
func (d dovecot) options(t *testing.T, id, password string, logs *testkit.Buffer) *producer.Options {
	t.Helper()
	accts, err := producer.TemplateAccounts(d.prefix+"%d", d.users, password)
	if err != nil {
		t.Fatalf("TemplateAccounts() error = %v", err)
	}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	// OpTimeout above Dovecot's auth_failure_delay (2 s): a refused LOGIN is
	// an AUTHENTICATIONFAILED answer, not our timeout.
	return &producer.Options{ID: id, Addr: d.addr, Accounts: accts, Sessions: dovecotSessions,
		OpTimeout: 5 * time.Second, FlushInterval: 500 * time.Millisecond, Seed: 42, Logger: log}
}

// tlsConfig trusts the self-signed certificate start.sh made (for
// 127.0.0.1), for STARTTLS on the cleartext port.
func (d dovecot) tlsConfig(t *testing.T) *tls.Config {
	t.Helper()
	pem, err := os.ReadFile(filepath.Join(d.dir, "cert.pem"))
	if err != nil {
		t.Fatalf("IMAPLOAD_DOVECOT_DIR %q: %v; want the output of deploy/dovecot/start.sh", d.dir, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("%s/cert.pem: no PEM certificate", d.dir)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// wrongPasswordOptions are the options of a producer with one session of
// one account, whose password is wrong. Dovecot 2.3 answers a failed LOGIN
// after auth_failure_delay (~1.5 s here) and keeps an auth penalty per source
// IP (anvil, for 29 s after the last failure): every later LOGIN from that
// IP, good ones included, first waits 2 s × 2^penalty, at most 15 s. The
// penalty grows with each failure of a different user or password; a repeat
// of the same one took 6 s here (4 s of penalty plus the failure delay). So
// the producer dials from a loopback address of its own, fresh for each
// call, so that neither the good producers (127.0.0.1) nor an attempt just
// before are delayed; one account keeps the penalty from growing, and the
// operation timeout stays above the 6 s.
func (d dovecot) wrongPasswordOptions(t *testing.T, logs *testkit.Buffer) *producer.Options {
	t.Helper()
	o := d.options(t, "dcbad", wrongPassword, logs)
	o.Accounts, o.Sessions, o.OpTimeout = o.Accounts[:1], 1, 10*time.Second
	o.LocalAddr = fmt.Sprintf("127.%d.%d.%d", 1+rand.IntN(254), rand.IntN(256), 1+rand.IntN(254))
	return o
}

// newDovecotFleet is a fleet bench without the embedded IMAP server: embedded
// NATS with JetStream, the samples stream, and the test's own connection.
func newDovecotFleet(t *testing.T) *fleet {
	t.Helper()
	ns, nc := natstest.Start(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream.New() error = %v", err)
	}
	if _, err := bus.EnsureSamples(context.Background(), js, nil); err != nil {
		t.Fatalf("bus.EnsureSamples() error = %v", err)
	}
	return &fleet{t: t, nats: ns, nc: nc, js: js}
}
