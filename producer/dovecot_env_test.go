package producer_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/internal/testkit/natstest"
	"github.com/imapload/imapload/producer"
)

// dovecot is the private Dovecot of the environment, with the producer's
// options for it.
type dovecot struct{ testkit.DovecotEnv }

// dovecotFromEnv returns the Dovecot the environment names (see
// testkit.DovecotFromEnv).
func dovecotFromEnv(t *testing.T) dovecot { return dovecot{testkit.DovecotFromEnv(t, 1)} }

// options are a producer's options against Dovecot, with every account's
// password set to password, logging at debug level to logs.
func (d dovecot) options(t *testing.T, id, password string, logs *testkit.Buffer) *producer.Options {
	t.Helper()
	accts, err := producer.TemplateAccounts(d.Prefix+"%d", d.Users, password)
	if err != nil {
		t.Fatalf("TemplateAccounts() error = %v", err)
	}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	// OpTimeout above Dovecot's auth_failure_delay (2 s): a refused LOGIN is
	// an AUTHENTICATIONFAILED answer, not our timeout.
	return &producer.Options{ID: id, Addr: d.Addr, Accounts: accts, Sessions: dovecotSessions,
		OpTimeout: 5 * time.Second, FlushInterval: 500 * time.Millisecond, Seed: 42, Logger: log}
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
