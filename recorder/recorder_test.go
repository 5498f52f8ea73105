package recorder_test

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"IMAP NO with a response code stays", "imap: NO [AUTHENTICATIONFAILED] Authentication failed.",
			"imap: NO [AUTHENTICATIONFAILED] Authentication failed."},
		{"leading tag is stripped", "A12 NO [AUTHENTICATIONFAILED] Authentication failed.",
			"NO [AUTHENTICATIONFAILED] Authentication failed."},
		{"tag before BAD", "T3 BAD Command unknown", "BAD Command unknown"},
		{"addresses and ports", "read tcp 127.0.0.2:54321->127.0.0.1:1143: read: connection reset by peer",
			"read tcp <addr>-><addr>: read: connection reset by peer"},
		{"IPv6 address", "dial tcp [2001:db8::1]:993: connect: connection refused",
			"dial tcp <addr>: connect: connection refused"},
		{"i/o timeout", "dial tcp 10.0.0.5:993: i/o timeout", "dial tcp <addr>: i/o timeout"},
		{"our timeout", "timeout", "timeout"},
		{"integrity", "integrity", "integrity"},
		{"double-quoted text", `imap: NO Mailbox "Foo Bar" does not exist`, `imap: NO Mailbox "…" does not exist`},
		{"single-quoted text", `imap: NO Mailbox 'x y' busy`, `imap: NO Mailbox '…' busy`},
		{"UIDs and numbers", "imap: NO [SERVERBUG] UID 12345 not found", "imap: NO [SERVERBUG] UID <n> not found"},
		{"hex ids and durations", "session deadbeef01 failed after 1.5s", "session <hex> failed after <n>s"},
		{"mail addresses", "user alice@example.org unknown", "user <email> unknown"},
		{"runs of blanks", "connection \t closed\n by  peer", "connection closed by peer"},
		{"empty", "", "unknown error"},
		{"blank", "   ", "unknown error"},
		{"plain words stay", "EOF", "EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := recorder.Normalize(tt.in); got != tt.want {
				t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestNormalizeKeepsFailuresApart checks that different failures stay
// different kinds, and that a long message is cut to the contract's bound.
func TestNormalizeKeepsFailuresApart(t *testing.T) {
	kinds := map[string]string{}
	for _, msg := range []string{
		"imap: NO [AUTHENTICATIONFAILED] Authentication failed.",
		"read tcp 127.0.0.1:5->127.0.0.1:6: read: connection reset by peer",
		"dial tcp 127.0.0.1:6: i/o timeout",
		"timeout",
		"integrity",
		"imap: NO [SERVERBUG] injected fault",
	} {
		k := recorder.Normalize(msg)
		if other, dup := kinds[k]; dup {
			t.Errorf("Normalize(%q) = Normalize(%q) = %q, want distinct kinds", msg, other, k)
		}
		kinds[k] = msg
	}
	long := strings.Repeat("é", messages.MaxKindBytes)
	if k := recorder.Normalize(long); len(k) > messages.MaxKindBytes || !strings.HasPrefix(long, k) {
		t.Errorf("Normalize(%d bytes) = %d bytes, want a prefix of at most %d on a rune boundary", len(long), len(k), messages.MaxKindBytes)
	}
}

// TestReservoirUniform checks Algorithm R through the public API: values
// 0…n−1 (their positions in the stream) are offered to a reservoir of k; over
// many trials every part of the stream must be sampled equally often. A
// chi-square over 20 position buckets (19 degrees of freedom; 43.8 is the
// 0.1% critical value) tests it, on fixed seeds so the test is deterministic.
func TestReservoirUniform(t *testing.T) {
	const n, k, trials, buckets = 1000, 100, 600, 20
	var hits [buckets]float64
	for trial := range trials {
		r := recorder.New("r1", 1, "p1", messages.StepInfo{}, &recorder.Options{Reservoir: k, Seed: uint64(trial + 1)})
		for i := range n {
			r.Record(messages.Fetch, time.Duration(i)*time.Microsecond, time.Microsecond)
		}
		s := r.Cut(0, time.Second, true, messages.Health{}).PhaseStats(messages.Fetch).Response
		if s.Count != n || len(s.Values) != k {
			t.Fatalf("trial %d: reservoir of %d values from count %d, want %d from %d", trial, len(s.Values), s.Count, k, n)
		}
		for _, v := range s.Values {
			hits[int(v)*buckets/n]++
		}
	}
	expected := float64(trials*k) / buckets
	chi2 := 0.0
	for _, h := range hits {
		chi2 += (h - expected) * (h - expected) / expected
	}
	if chi2 > 43.8 {
		t.Errorf("reservoir hits by stream position %v: chi-square = %.1f, want ≤ 43.8 (uniform)", hits, chi2)
	}
}

// TestRecorderBatchRoundTrip records a step's worth of outcomes, cuts a
// batch, encodes and decodes it, and checks that nothing is lost or altered
// and that secrets never reach the wire.
func TestRecorderBatchRoundTrip(t *testing.T) {
	info := messages.StepInfo{FleetRate: 900, Rate: 300, Producers: 3, Warmup: int64(time.Second), Duration: int64(3 * time.Second)}
	r := recorder.New("run-1", 2, "p1", info, &recorder.Options{Seed: 9, Secrets: []string{"s3cret"}})
	for i := range 5000 {
		r.Record(messages.Fetch, time.Duration(1000+i)*time.Microsecond, 800*time.Microsecond)
		r.Scheduled(true)
	}
	r.RecordTLS(3 * time.Millisecond)
	r.Record(messages.Dial, 4*time.Millisecond, 4*time.Millisecond)
	r.Fail(messages.Login, errors.New("A7 NO [AUTHENTICATIONFAILED] bad password s3cret"))
	r.Fail(messages.Login, errors.New("A9 NO [AUTHENTICATIONFAILED] bad password s3cret"))
	r.Drop(messages.Store)
	r.Lag(2 * time.Millisecond)
	want := r.Cut(-time.Second, 500*time.Millisecond, true, messages.Health{CPU: 0.25, Sessions: 8, Lost: 1})

	data, err := messages.EncodeBatch(want)
	if err != nil {
		t.Fatalf("EncodeBatch() error = %v", err)
	}
	if strings.Contains(string(data), "s3cret") {
		t.Errorf("encoded batch holds a secret")
	}
	got, err := messages.DecodeBatch(data)
	if err != nil {
		t.Fatalf("DecodeBatch() error = %v", err)
	}
	if !got.Sent.Equal(want.Sent) {
		t.Errorf("DecodeBatch().Sent = %v, want %v", got.Sent, want.Sent)
	}
	got.Sent = want.Sent
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DecodeBatch(EncodeBatch(b)) = %+v\nwant %+v", got, want)
	}
	checkRoundTrip(t, got)
}

func checkRoundTrip(t *testing.T, b *messages.SampleBatch) {
	t.Helper()
	if b.Scheduled != 5001 || b.Completed != 5000 || b.Health.Dropped != 1 || b.Health.Lost != 1 || b.Health.LagP99 == 0 {
		t.Errorf("batch scheduled %d completed %d health %+v; want 5001, 5000, 1 dropped, 1 lost, lag", b.Scheduled, b.Completed, b.Health)
	}
	fetch := b.PhaseStats(messages.Fetch)
	if fetch == nil || fetch.Response.Count != 5000 || len(fetch.Response.Values) != 1024 {
		t.Fatalf("fetch stats = %+v, want 5000 responses sampled into 1024", fetch)
	}
	s, err := messages.DecodeSketch(fetch.Response.Sketch)
	if err != nil {
		t.Fatalf("DecodeSketch() error = %v", err)
	}
	if p50, _ := s.GetValueAtQuantile(0.5); math.Abs(p50-3500) > 3500*messages.SketchAccuracy*2 {
		t.Errorf("decoded sketch p50 = %.1f µs, want 3500 µs ± 1%%", p50)
	}
	login := b.PhaseStats(messages.Login)
	if login == nil || len(login.Errors) != 1 || login.Errors[0].Count != 2 ||
		login.Errors[0].Kind != "NO [AUTHENTICATIONFAILED] bad password ***" {
		t.Errorf("login errors = %+v, want 2 of one kind with the secret scrubbed", login)
	}
	if dial := b.PhaseStats(messages.Dial); dial == nil || dial.TLS.Count != 1 {
		t.Errorf("dial stats = %+v, want the TLS handshake kept apart", dial)
	}
	if store := b.PhaseStats(messages.Store); store == nil || store.Dropped != 1 || store.Attempted != 0 {
		t.Errorf("store stats = %+v, want 1 dropped, none attempted", store)
	}
}

// TestRecorderDescribe checks that Describe names an error as Fail records
// it, secrets scrubbed, so a log line and a batch agree.
func TestRecorderDescribe(t *testing.T) {
	r := recorder.New("r1", 1, "p1", messages.StepInfo{}, &recorder.Options{Seed: 1, Secrets: []string{"s3cret"}})
	err := errors.New("A7 NO [AUTHENTICATIONFAILED] bad password s3cret")
	kind, example := r.Describe(err)
	r.Fail(messages.Login, err)
	e := r.Cut(0, time.Second, true, messages.Health{}).PhaseStats(messages.Login).Errors
	if len(e) != 1 || e[0].Kind != kind || e[0].Example != example {
		t.Errorf("Describe() = %q, %q; Fail recorded %+v, want the same kind and example", kind, example, e)
	}
	if strings.Contains(kind+example, "s3cret") {
		t.Errorf("Describe() = %q, %q, holds the secret", kind, example)
	}
	if kind, _ := r.Describe(nil); kind != "unknown error" {
		t.Errorf("Describe(nil) kind = %q, want \"unknown error\"", kind)
	}
}

// TestRecorderDeliveries: a delivery never sent counts in its phase only,
// not among the step's scheduled commands nor the health's drops, and
// arrivals add up in the batch and start afresh after a cut.
func TestRecorderDeliveries(t *testing.T) {
	r := recorder.New("r1", 1, "p1", messages.StepInfo{DeliverRate: 5}, &recorder.Options{Seed: 1})
	r.DropApart(messages.Deliver)
	r.Record(messages.Deliver, 30*time.Millisecond, 20*time.Millisecond)
	r.Arrived(messages.Arrivals{Watched: 1})
	r.Arrived(messages.Arrivals{Seen: 1, Duplicates: 1})
	b := r.Cut(0, time.Second, false, messages.Health{})
	if b.Scheduled != 0 || b.Health.Dropped != 0 {
		t.Errorf("Cut() scheduled %d, health dropped %d; want 0, 0 (deliveries counted apart)", b.Scheduled, b.Health.Dropped)
	}
	ps := b.PhaseStats(messages.Deliver)
	if ps == nil || ps.Dropped != 1 || ps.Succeeded != 1 {
		t.Fatalf("Cut() deliver phase = %+v, want 1 dropped, 1 succeeded", ps)
	}
	if want := (messages.Arrivals{Watched: 1, Seen: 1, Duplicates: 1}); b.Arrivals != want {
		t.Errorf("Cut() arrivals = %+v, want %+v", b.Arrivals, want)
	}
	if again := r.Cut(time.Second, 2*time.Second, true, messages.Health{}); again.Arrivals != (messages.Arrivals{}) {
		t.Errorf("second Cut() arrivals = %+v, want none", again.Arrivals)
	}
}
