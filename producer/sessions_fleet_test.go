package producer_test

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
)

// connects records when the server accepted each connection.
type connects struct {
	mu sync.Mutex
	at []time.Time
}

func (c *connects) hook(_ net.Addr, at time.Time) {
	c.mu.Lock()
	c.at = append(c.at, at)
	c.mu.Unlock()
}

// since returns the connection times at or after t, sorted.
func (c *connects) since(t time.Time) []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []time.Time
	for _, at := range c.at {
		if !at.Before(t) {
			out = append(out, at)
		}
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}

// maxIn is the most times that fall in any span of length d.
func maxIn(times []time.Time, d time.Duration) int {
	most := 0
	for i := range times {
		j := i
		for j < len(times) && times[j].Sub(times[i]) < d {
			j++
		}
		most = max(most, j-i)
	}
	return most
}

// TestFirstDialsSpreadOverStagger runs three producers over implicit TLS
// with a workload that never logs out, so every connection is a session's
// first dial, and checks that the dials cover the stagger window instead of
// arriving together. It also checks that appended messages come back intact
// (no integrity error) over TLS.
func TestFirstDialsSpreadOverStagger(t *testing.T) {
	var conns connects
	f := newFleet(t, &embedded.IMAPOptions{Users: 12, TLS: true, OnConnect: conns.hook})
	for i := range 3 {
		o := f.options(fmt.Sprintf("s%d", i+1), 8)
		o.TLS, o.TLSConfig = true, f.imap.TLSConfig()
		f.start(o)
	}
	f.waitLive(3)
	const window = time.Second
	type result struct {
		dials   []time.Time
		batches map[string][]*messages.SampleBatch
	}
	// A stall of the test process bunches the dials it delays; one shorter
	// than a tenth of the window can neither cut the span under 60% nor put
	// a third of the 24 dials into one tenth.
	r := unstalled(t, 5, window/10, func(i int) (result, error) {
		col := f.collect("stagger", i+1)
		sent := time.Now()
		if _, err := f.ask(fmt.Sprintf(`{"run":"stagger","step":%d,"rate":150,"warmup":"1200ms","duration":"800ms",
			"stagger":"1s","mix":{"append":1,"fetch":1}}`, i+1), 3); err != nil {
			return result{}, err
		}
		got, err := col.await(3, 10*time.Second)
		return result{conns.since(sent), got}, err
	})
	checkBatches(t, r.batches)
	dials := r.dials
	if len(dials) != 24 {
		t.Fatalf("server saw %d connections, want 24 first dials and no reconnect", len(dials))
	}
	if span := dials[len(dials)-1].Sub(dials[0]); span < window*6/10 {
		t.Errorf("first dials spread over %v, want ≥ 60%% of the %v stagger window", span, window)
	}
	if most := maxIn(dials, window/10); most > len(dials)/3 {
		t.Errorf("%d of %d first dials within %v, want at most a third in any tenth of the window", most, len(dials), window/10)
	}
	for id, bs := range r.batches {
		checkClean(t, id, bs)
	}
}

// checkClean fails on any error sample (an integrity error among them) and
// checks that fetches were recorded.
func checkClean(t *testing.T, id string, bs []*messages.SampleBatch) {
	t.Helper()
	var fetches uint64
	for _, b := range bs {
		for _, ps := range b.Phases {
			if len(ps.Errors) > 0 {
				t.Errorf("%s phase %s errors: %+v", id, ps.Phase, ps.Errors)
			}
		}
		if ps := b.PhaseStats(messages.Fetch); ps != nil {
			fetches += ps.Succeeded
		}
	}
	if fetches == 0 {
		t.Errorf("%s: no successful FETCH recorded", id)
	}
}

// TestReconnectsAfterDropAreSpread drops every connection mid-step and checks
// from the server side that the sessions come back spread by their jittered
// backoff, not in one synchronized wave.
func TestReconnectsAfterDropAreSpread(t *testing.T) {
	var conns connects
	f := newFleet(t, &embedded.IMAPOptions{Users: 10, OnConnect: conns.hook})
	r := f.start(f.options("d1", 16))
	f.waitLive(1)
	col := f.collect("drop", 1)
	f.request(`{"run":"drop","step":1,"rate":160,"warmup":"300ms","duration":"10s","stagger":"200ms",
		"mix":{"select":1,"fetch":1}}`, 1)
	// 16 reconnections under full jitter over 50 ms: a stall under 15 ms
	// bunches at most about 5 of them, under the 8 judged.
	back := unstalled(t, 5, 15*time.Millisecond, func(int) ([]time.Time, error) {
		if !testkit.Poll(5*time.Second, func() bool { return len(f.imap.Sessions()) == 16 }) {
			return nil, errors.New("timed out waiting for 16 sessions to log in")
		}
		dropped := time.Now()
		f.imap.DropAll()
		if !testkit.Poll(5*time.Second, func() bool { return len(conns.since(dropped)) >= 16 }) {
			return nil, errors.New("timed out waiting for 16 reconnections")
		}
		return conns.since(dropped)[:16], nil
	})
	span := back[15].Sub(back[0])
	most := maxIn(back, 5*time.Millisecond)
	t.Logf("16 reconnections over %v, at most %d in 5 ms", span, most)
	if span < 20*time.Millisecond {
		t.Errorf("16 reconnections within %v, want them spread (full jitter over 50 ms)", span)
	}
	if most > 8 {
		t.Errorf("%d of 16 reconnections within 5 ms, want at most half", most)
	}
	if err := r.stop(t); err != nil {
		t.Errorf("Run() error = %v", err)
	}
	got := col.finals(t, 1, 5*time.Second)
	if last := got["d1"][len(got["d1"])-1]; last.To >= int64(10*time.Second) {
		t.Errorf("final batch to %v, want the step ended early by the cancel", time.Duration(last.To))
	}
}

// TestSaturatedServer offers more than the server can serve: the response
// time (from the intended start) grows well beyond the service time (from the
// send), which stays at the server's own latency, and the generator drops
// what its queue cannot hold.
func TestSaturatedServer(t *testing.T) {
	const serviceTime = 5 * time.Millisecond
	f := newFleet(t, &embedded.IMAPOptions{Users: 10, Workers: 2, ServiceTime: serviceTime})
	f.start(f.options("sat", 16))
	f.waitLive(1)
	got := unstalled(t, 3, 100*time.Millisecond, func(i int) (map[string][]*messages.SampleBatch, error) {
		col := f.collect("sat", i+1)
		if _, err := f.ask(fmt.Sprintf(`{"run":"sat","step":%d,"rate":600,"warmup":"500ms","duration":"2s",
			"stagger":"200ms","mix":{"fetch":1}}`, i+1), 1); err != nil {
			return nil, err
		}
		return col.await(1, 15*time.Second)
	})
	checkBatches(t, got)
	bs := got["sat"]

	resp50 := quantile(t, bs, messages.Fetch, response, 0.5)
	resp99 := quantile(t, bs, messages.Fetch, response, 0.99)
	svc50 := quantile(t, bs, messages.Fetch, service, 0.5)
	svc99 := quantile(t, bs, messages.Fetch, service, 0.99)
	scheduled, completed, dropped := sums(bs)
	t.Logf("fetch response p50 %v p99 %v, service p50 %v p99 %v; scheduled %d completed %d dropped %d",
		resp50, resp99, svc50, svc99, scheduled, completed, dropped)
	if svc50 < serviceTime || svc50 > 200*time.Millisecond {
		t.Errorf("service p50 = %v, want the server's latency: ≥ %v (its service time) and well under the response time", svc50, serviceTime)
	}
	if resp50 < 2*svc50 || resp99 < 2*svc99 {
		t.Errorf("response p50/p99 = %v/%v, want ≥ 2× service p50/p99 %v/%v (time queued in the producer)", resp50, resp99, svc50, svc99)
	}
	if dropped == 0 {
		t.Errorf("dropped = 0, want the generator to drop what its full queue cannot hold")
	}
	var failed uint64
	for _, b := range bs {
		if ps := b.PhaseStats(messages.Fetch); ps != nil {
			failed += ps.Attempted - ps.Succeeded
		}
	}
	if scheduled < 1199 || scheduled > 1201 || scheduled != completed+failed+dropped {
		t.Errorf("scheduled %d = completed %d + failed %d + dropped %d? want 1200 ± 1, every command accounted for once",
			scheduled, completed, failed, dropped)
	}
	if float64(completed) > 0.9*float64(scheduled) {
		t.Errorf("completed %d of %d scheduled, want < 90%% from a saturated server", completed, scheduled)
	}
}
