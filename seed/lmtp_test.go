package seed_test

import (
	"github.com/imapload/imapload/internal/testkit"
	"strings"
	"testing"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/seed"
)

// TestSeedLMTP: with LMTPAddr, INBOX's missing messages arrive by LMTP
// (the server counts them delivered) while another folder is APPENDed, and
// a second run finds every account full.
func TestSeedLMTP(t *testing.T) {
	s := startIMAP(t, &embedded.IMAPOptions{Users: 2, SeedMessages: -1, LMTPAddr: "127.0.0.1:0"})
	ts := targets(t, "INBOX:3,Archive:1", 8)
	o := seed.Options{Addr: s.Addr(), LMTPAddr: s.LMTPAddr(), Accounts: accounts(s, 2), Targets: ts, Source: generator(t), Concurrency: 2}
	sum, err := run(t, t.Context(), o)
	if err != nil {
		t.Fatalf("Run() error = %v, summary %+v", err, sum)
	}
	checkTargets(t, s, o.Accounts, ts)
	if got, want := s.Stats().Delivered, uint64(2*6); got != want {
		t.Errorf("Stats().Delivered = %d, want %d (INBOX by LMTP, Archive by APPEND)", got, want)
	}
	if sum, err := run(t, t.Context(), o); err != nil || sum.Messages != 0 || sum.Full != 2 {
		t.Errorf("second Run() = %d messages, %d full, error %v; want 0, 2, nil", sum.Messages, sum.Full, err)
	}
}

// TestSeedLMTPUnreachable: an LMTP port nobody listens on fails the
// account with an error that names the LMTP connection.
func TestSeedLMTPUnreachable(t *testing.T) {
	s := startIMAP(t, &embedded.IMAPOptions{Users: 1, SeedMessages: -1})
	o := seed.Options{Addr: s.Addr(), LMTPAddr: testkit.ClosedAddr(t), Accounts: accounts(s, 1), Targets: targets(t, "INBOX", 1), Source: generator(t)}
	sum, err := run(t, t.Context(), o)
	if err == nil || sum.Failed != 1 {
		t.Fatalf("Run() to a closed LMTP port = %d failed, error %v; want 1 failed and an error", sum.Failed, err)
	}
	if len(sum.Errors) == 0 || !strings.Contains(sum.Errors[0].Err, "LMTP connect") {
		t.Errorf("Summary.Errors = %+v, want one naming the LMTP connection", sum.Errors)
	}
}
