package observe

import (
	"context"
	"sync"
	"time"

	"github.com/imapload/imapload/messages"
)

// runStep announces the step, scrapes every endpoint from start to end
// (each on its own goroutine, so that a slow one delays no other), then
// publishes the figures, also when ctx ended first.
func (ob *Observer) runStep(ctx context.Context, cmd messages.StepCommand, start, end time.Time) {
	var wg sync.WaitGroup
	wg.Go(func() { ob.send(ctx, ob.message(cmd, nil, false)) })
	eps := make([]*endpoint, len(ob.scrapers))
	for i, s := range ob.scrapers {
		eps[i] = newEndpoint(s.shown)
		wg.Go(func() { ob.watch(ctx, s, eps[i], start, end) })
	}
	wg.Wait()
	f := ob.message(cmd, eps, ctx.Err() != nil && time.Now().Before(end))
	for _, e := range f.Endpoints {
		if e.Failed > 0 {
			ob.log.Warn("observe: scrapes failed", "run", cmd.Run, "step", cmd.Step, "endpoint", e.URL,
				"failed", e.Failed, "of", e.Failed+e.Scrapes, "last_error", e.Error)
		}
	}
	if ob.send(ctx, f) && ob.opts.OnFigures != nil {
		ob.opts.OnFigures(f)
	}
}

// watch scrapes s at start, every Interval on start's schedule, and at
// end, folding each scrape into e, until end or until ctx ends. A scrape
// slower than Interval skips the ticks it overran; a scrape cut short by
// ctx is no failure of the endpoint.
func (ob *Observer) watch(ctx context.Context, s *scraper, e *endpoint, start, end time.Time) {
	var buf []reading
	for at := start; ; {
		if !sleepUntil(ctx, at) {
			return
		}
		fams, got, err := s.scrape(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			e.fail(err)
			ob.log.Debug("observe: scrape failed", "endpoint", s.shown, "err", err)
		default:
			var means []meanRule
			buf, means = readings(fams, ob.opts.Metrics, buf[:0])
			e.add(got, buf, means)
		}
		now := time.Now()
		if !at.Before(end) || !now.Before(end) {
			return
		}
		at = nextScrape(start, end, now, ob.opts.Interval)
	}
}

// nextScrape is the first tick of start's schedule after now, or end if
// that comes first.
func nextScrape(start, end, now time.Time, interval time.Duration) time.Time {
	next := start.Add((now.Sub(start)/interval + 1) * interval)
	if next.After(end) {
		return end
	}
	return next
}

// sleepUntil waits until t; false when ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
