package producer

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"sync/atomic"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// job is one scheduled command: its phase and when it should have started.
// A job of a scripted step is a whole session: script holds its commands and
// phase the first of them.
type job struct {
	phase    messages.Phase
	intended time.Time
	script   messages.Script
}

// sessionEnv is what the sessions of one step share: the configuration, the
// step's clock, its recorder and its account pool. It also holds the rules of
// what gets measured, so that every session applies them the same way.
type sessionEnv struct {
	cfg      *config
	tlsConf  *tls.Config // nil without TLS
	tl       timeline
	rec      *recorder.Recorder
	pool     *accountPool
	errs     *firstErrors
	scripted bool         // each job is a whole session of the step's script
	open     atomic.Int32 // connected sessions
	held     heldCount    // held IDLE connections (hold.go)
	setups   setupTrack   // the sessions' set-up stages (setup.go)
	// win ends with the measurement window (endWindow): a set-up still
	// waiting then is cut, as it can serve nothing the step measures.
	win    context.Context
	endWin context.CancelFunc
	inbox  *inboxWatch // deliveries awaited on them; nil when the step delivers none
	// fetchTarget is the step's messages.FetchRandom or FetchRecent.
	fetchTarget string
	finished    chan struct{} // closed when the dispatcher has stopped and closed the queue
}

// newSessionEnv returns the environment of one step, whose first errors of
// each kind go to log.
func newSessionEnv(cfg *config, tl timeline, rec *recorder.Recorder, log *slog.Logger, seed uint64) *sessionEnv {
	win, endWin := context.WithCancel(context.Background())
	return &sessionEnv{
		win:         win,
		endWin:      endWin,
		cfg:         cfg,
		tlsConf:     cfg.clientTLS(),
		tl:          tl,
		rec:         rec,
		pool:        newAccountPool(cfg.Accounts, cfg.SessionsPerAccount, seed),
		errs:        newFirstErrors(log),
		finished:    make(chan struct{}),
		fetchTarget: messages.FetchRandom,
	}
}

// scheduled records a scheduled command that was sent at sent and finished
// at end: response time from the intended start, service time from the send.
// Commands intended before or after the measurement window are not recorded
// (but their errors may be logged).
func (e *sessionEnv) scheduled(j job, sent, end time.Time, err error) {
	in := e.tl.inWindow(j.intended)
	switch {
	case err != nil:
		e.fail(j.phase, err, in)
	case in:
		e.rec.Record(j.phase, end.Sub(j.intended), end.Sub(sent))
	}
	if in {
		e.rec.Scheduled(err == nil)
	}
}

// unscheduled records an operation the producer did on its own (a dial, a
// LOGIN, the session's SELECT, an integrity FETCH) if ref, the moment that
// decides whether it belongs to the window, falls in it. Its response and
// service times are both its duration.
func (e *sessionEnv) unscheduled(p messages.Phase, ref, start, end time.Time, err error) {
	in := e.tl.inWindow(ref)
	switch {
	case err != nil:
		e.fail(p, err, in)
	case in:
		e.rec.Record(p, end.Sub(start), end.Sub(start))
	}
}

// endWindow keeps the set-up counts as the window ends and cuts the
// set-ups still waiting (their sessions disconnect): they would otherwise
// hold the step's final batch for up to an operation timeout.
func (e *sessionEnv) endWindow() {
	e.setups.endWindow()
	e.endWin()
}

// inStage runs op as one attempt of set-up stage, counted in the step's
// set-up; with ctx ended when op fails (the step was stopped), uncounted.
// If the window ends first, abort is called to make op return, and its
// error is errSetupCut.
func (e *sessionEnv) inStage(ctx context.Context, stage int, abort func(), op func() error) error {
	e.setups.begin(stage)
	stop := context.AfterFunc(e.win, abort)
	err := op()
	if !stop() && err != nil {
		err = errSetupCut
	}
	switch {
	case err == nil:
		e.setups.end(stage, "")
	case ctx.Err() != nil:
		e.setups.cancel(stage)
	default:
		kind, _ := e.rec.Describe(err)
		e.setups.end(stage, kind)
	}
	return err
}

// setup records a set-up operation of a scripted session (its dial) if
// intended, the session's intended start, falls in the window: its response
// time runs from intended, its service time from start.
func (e *sessionEnv) setup(p messages.Phase, intended, start, end time.Time, err error) {
	in := e.tl.inWindow(intended)
	switch {
	case err != nil:
		e.fail(p, err, in)
	case in:
		e.rec.Record(p, end.Sub(intended), end.Sub(start))
	}
}

// fail records err in phase p if it is in the window, and logs it if it is
// the first of its kind in p this step, in the window or not: an error
// during warm-up is as telling.
func (e *sessionEnv) fail(p messages.Phase, err error, inWindow bool) {
	var kind, example string
	if inWindow {
		kind, example = e.rec.Fail(p, err)
	} else {
		kind, example = e.rec.Describe(err)
	}
	e.errs.note(p, kind, example)
}

// checked records the integrity check of j, an APPEND, if j is in the
// window; err is the check's failure, nil if it passed.
func (e *sessionEnv) checked(j job, err error) {
	if e.tl.inWindow(j.intended) {
		e.rec.Check(err == nil)
	}
}

// uncheckable records j, a successful APPEND in the window, as one no check
// could address: the server named no UID for it.
func (e *sessionEnv) uncheckable(j job) {
	if e.tl.inWindow(j.intended) {
		e.rec.Unaddressable()
	}
}

// drop records a scheduled command that was never sent; for a session of a
// script, every command of it.
func (e *sessionEnv) drop(j job) {
	if !e.tl.inWindow(j.intended) {
		return
	}
	if j.script == nil {
		e.rec.Drop(j.phase)
	}
	for _, p := range j.script {
		e.rec.Drop(p)
	}
}

// clientTLS is the TLS configuration of dials (implicit TLS or
// STARTTLS), or nil without TLS.
func (c *config) clientTLS() *tls.Config {
	if !c.TLS && !c.StartTLS {
		return nil
	}
	t := &tls.Config{}
	if c.TLSConfig != nil {
		t = c.TLSConfig.Clone()
	}
	if t.ServerName == "" {
		t.ServerName, _, _ = net.SplitHostPort(c.Addr)
	}
	if t.NextProtos == nil {
		t.NextProtos = []string{"imap"} // as imapclient.DialTLS does
	}
	return t
}
