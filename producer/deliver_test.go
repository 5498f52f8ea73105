package producer_test

import (
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/messages"
)

// deliveries sums what a producer's batches say of its deliveries.
type deliveries struct {
	attempted, succeeded, dropped, inbox uint64
	arrivals                             messages.Arrivals
	errs                                 []string
}

func sumDeliveries(bs []*messages.SampleBatch) deliveries {
	var d deliveries
	for _, b := range bs {
		d.arrivals.Add(b.Arrivals)
		if ps := b.PhaseStats(messages.Deliver); ps != nil {
			d.attempted, d.succeeded, d.dropped = d.attempted+ps.Attempted, d.succeeded+ps.Succeeded, d.dropped+ps.Dropped
			for _, e := range ps.Errors {
				d.errs = append(d.errs, e.Kind+" ("+e.Example+")")
			}
		}
		if ps := b.PhaseStats(messages.Inbox); ps != nil {
			d.inbox += ps.Response.Count
			for _, e := range ps.Errors {
				d.errs = append(d.errs, "inbox: "+e.Kind)
			}
		}
	}
	return d
}

// TestDeliverEmbedded: a step of 20 commands/s, an IDLE connection held on
// each of the 5 accounts and 20 deliveries/s by LMTP to the embedded
// server. Every delivery of the window is scheduled and counted once
// (40 over 2 s), none among the commands; each is accepted, seen once on
// its account's held connection (its time to inbox in phase inbox), and
// none twice.
func TestDeliverEmbedded(t *testing.T) {
	f := newFleet(t, &embedded.IMAPOptions{Users: 5, LMTPAddr: "127.0.0.1:0"})
	o := f.options("d1", 4)
	o.LMTPAddr, o.DeliverSizes, o.InboxTimeout = f.imap.LMTPAddr(), "2k-8k:3,40k-80k:1", 5*time.Second
	f.start(o)
	f.waitLive(1)
	bs := f.runStep("d1", "deliver", 1, `"rate":20,"duration":"2s","warmup":"1s","connections":5,"deliver_rate":20,"mix":{"noop":1}`)
	d := sumDeliveries(bs)
	var scheduled uint64
	for _, b := range bs {
		scheduled += b.Scheduled
		if b.Info.DeliverRate != 20 || b.Info.FleetDeliverRate != 20 {
			t.Errorf("batch %d: Info deliver rates %v/%v, want 20/20", b.Seq, b.Info.DeliverRate, b.Info.FleetDeliverRate)
		}
	}
	if scheduled != 40 {
		t.Errorf("scheduled commands = %d, want 40 (20/s over 2 s; deliveries apart)", scheduled)
	}
	if d.attempted+d.dropped != 40 || d.succeeded != d.attempted || len(d.errs) > 0 {
		t.Errorf("deliveries: attempted %d, succeeded %d, dropped %d, errors %v; want 40 scheduled, all accepted",
			d.attempted, d.succeeded, d.dropped, d.errs)
	}
	a := d.arrivals
	if a.Watched != d.succeeded || a.Seen != a.Watched || a.Missing != 0 || a.Duplicates != 0 || d.inbox != a.Seen {
		t.Errorf("arrivals = %+v, inbox latencies %d; want every one of the %d accepted watched and seen once", a, d.inbox, d.succeeded)
	}
	if got := f.imap.Stats().Delivered; got < 40 {
		t.Errorf("embedded Stats().Delivered = %d, want at least the window's 40", got)
	}
}

// TestDeliverWithoutTarget: a producer started without --lmtp or --smtp
// refuses a step that delivers, saying how to start it.
func TestDeliverWithoutTarget(t *testing.T) {
	f := newFleet(t, nil)
	f.start(f.options("d2", 2))
	f.waitLive(1)
	rs := f.request(`{"run":"deliver","step":1,"rate":10,"duration":"1s","deliver_rate":5}`, 1)
	if rs[0].Accepted || !strings.Contains(rs[0].Error, "no delivery target: start it with --lmtp HOST:PORT or --smtp HOST:PORT") {
		t.Errorf("reply = %+v, want refused for want of a delivery target", rs[0])
	}
}
