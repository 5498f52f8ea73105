package producer

import (
	"os"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// BenchmarkDeliver is what the producer spends on one delivery beside one
// APPEND, one at a time with GOMAXPROCS 1: a delivery is a message drawn
// from the size table and generated, a dial, LHLO, MAIL, RCPT, DATA, the
// reply and QUIT on a connection of its own, and its sample recorded; an
// APPEND is BenchmarkCommand's (a 1–2 KiB message on a logged-in session,
// served and recorded). size=small draws deliveries of APPEND's size,
// size=seed from seed's table (mailgen.DefaultSizes). Against the embedded
// server (the default) the server's CPU is in the same process and counted;
// with IMAPLOAD_DOVECOT_ADDR and IMAPLOAD_DOVECOT_LMTP_ADDR set it runs
// against that Dovecot, whose CPU is reported apart.
func BenchmarkDeliver(b *testing.B) {
	tg, lmtp := newDeliverBenchTarget(b)
	defer withProcs(1)()
	b.Run(tg.name+"/append", func(b *testing.B) {
		b.ReportAllocs()
		benchCommand(b, tg, 1, 1, "append")
	})
	for _, sz := range []struct{ name, table string }{{"small", "1k-2k:1"}, {"seed", ""}} {
		b.Run(tg.name+"/deliver/size="+sz.name, func(b *testing.B) {
			b.ReportAllocs()
			dl := tg.deliverer(b, lmtp, sz.table)
			var n uint64
			measure(b, tg, 1, "delivery", time.Microsecond, func(int) error {
				n++
				dl.deliver(delivery{intended: time.Now(), account: tg.accts[int(n)%len(tg.accts)], n: n})
				return nil
			})
			checkDelivered(b, dl.env, b.N)
		})
	}
}

// newDeliverBenchTarget is newBenchTarget with an LMTP listener: the
// embedded server's, or Dovecot's.
func newDeliverBenchTarget(b *testing.B) (*benchTarget, string) {
	b.Helper()
	if os.Getenv("IMAPLOAD_DOVECOT_ADDR") != "" {
		lmtp := os.Getenv("IMAPLOAD_DOVECOT_LMTP_ADDR")
		if lmtp == "" {
			b.Skip("IMAPLOAD_DOVECOT_LMTP_ADDR is not set: Dovecot serves no LMTP (dovecot-lmtpd)")
		}
		return newBenchTarget(b), lmtp
	}
	srv := startTestIMAP(b, &embedded.IMAPOptions{LMTPAddr: "127.0.0.1:0", MaxMessages: 100})
	return &benchTarget{name: "embedded", addr: srv.Addr(), accts: benchAccounts(b, "user", 10, srv.Password())}, srv.LMTPAddr()
}

// deliverer is a deliverer to lmtp with sizes (a size table, "" for
// seed's), recording into an environment whose window is open.
func (tg *benchTarget) deliverer(b *testing.B, lmtp, sizes string) *deliverer {
	b.Helper()
	o := &Options{ID: "bench", Addr: tg.addr, Accounts: tg.accts, OpTimeout: 5 * time.Second, LMTPAddr: lmtp, DeliverSizes: sizes}
	cfg, err := o.config()
	if err != nil {
		b.Fatalf("config() error = %v", err)
	}
	tl := timeline{start: time.Now().Add(-time.Millisecond), duration: time.Hour}
	rec := recorder.New("bench", 1, cfg.ID, messages.StepInfo{}, &recorder.Options{Seed: 1, Secrets: cfg.secrets})
	seed := uint64(time.Now().UnixNano()) // Message-IDs unlike any earlier run's, in a Dovecot that keeps them
	return newDeliverer(newSessionEnv(cfg, tl, rec, cfg.Logger, 1), 1, messages.ArrivalConstant, seed)
}

// checkDelivered fails b unless n deliveries were recorded, none failed.
func checkDelivered(b *testing.B, env *sessionEnv, n int) {
	b.Helper()
	batch := env.rec.Cut(0, 0, true, messages.Health{})
	ps := batch.PhaseStats(messages.Deliver)
	if ps == nil || ps.Succeeded != uint64(n) || ps.Attempted != uint64(n) {
		b.Fatalf("phase deliver stats %+v, want %d deliveries succeeded", ps, n)
	}
}
