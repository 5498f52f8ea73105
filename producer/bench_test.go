package producer

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/imapload/imapload/messages"
)

// Benchmarks of the producer's own CPU per IMAP session and per command
// (issue 3's bars: ≤ 0.75 ms per login/select/fetch/logout session, ≤ 100 µs
// per command one at a time, ≤ 50 µs with several in flight). They drive
// the producer's real session code (dial, LOGIN, SELECT, the scheduled
// commands with their timeout guard and recording) and report the process's
// CPU, user + system from getrusage, per operation, and the share of it
// spent in the kernel (sys-%). Run them against Dovecot
// (see BENCHMARKS.md):
//
//	set -a; eval "$(deploy/dovecot/start.sh /tmp/dovecot 12143)"; set +a
//	go test ./producer -run '^$' -bench 'Session' -benchtime 400x -count 3
//	go test ./producer -run '^$' -bench 'Command' -benchtime 3000x -count 3
//	go test ./producer -run '^$' -bench 'FetchItems' -benchtime 3000x -count 3
//
// Without IMAPLOAD_DOVECOT_ADDR they run against the embedded server, whose
// CPU is then part of the figure (the names say "embedded").

// BenchmarkSession is a whole session: dial, LOGIN, SELECT INBOX, one FETCH
// (flags, envelope, body) and LOGOUT, by conc sessions at once, with
// GOMAXPROCS 1 and Go's default. client=producer is the producer's session
// code; client=go-imap is the same exchange with go-imap's client alone (no
// timeout guard, no recording), the baseline the producer builds on.
func BenchmarkSession(b *testing.B) {
	tg := newBenchTarget(b)
	for _, procs := range procsVariants() {
		for _, conc := range []int{1, 4} {
			name := fmt.Sprintf("%s/procs=%d/conc=%d/client=", tg.name, procs, conc)
			b.Run(name+"producer", func(b *testing.B) {
				defer withProcs(procs)()
				env := tg.env(b)
				ss := make([]*session, conc)
				for w := range ss {
					ss[w] = newSession(env, w, uint64(w+1))
				}
				measure(b, tg, conc, "session", time.Millisecond, func(w int) error { return fullSession(ss[w]) })
				checkRecorded(b, env, 2*b.N) // a FETCH and a LOGOUT per session
			})
			b.Run(name+"go-imap", func(b *testing.B) {
				defer withProcs(procs)()
				measure(b, tg, conc, "session", time.Millisecond, func(w int) error {
					return bareSession(tg.addr, tg.accts[w%len(tg.accts)])
				})
			})
		}
	}
}

// bareSession is fullSession's exchange with go-imap's client alone.
func bareSession(addr string, a Account) error {
	c, err := imapclient.DialInsecure(addr, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Login(a.User, a.Password).Wait(); err != nil {
		return err
	}
	if _, err := c.Select("INBOX", nil).Wait(); err != nil {
		return err
	}
	if _, err := c.Fetch(imap.SeqSetNum(1), fetchOptions).Collect(); err != nil {
		return err
	}
	return c.Logout().Wait()
}

// fullSession runs one session from dial to LOGOUT on s, disconnected before
// and after.
func fullSession(s *session) error {
	if err := s.connect(context.Background()); err != nil {
		return err
	}
	s.serve(job{phase: messages.Fetch, intended: time.Now()})
	s.serve(job{phase: messages.Logout, intended: time.Now()})
	if s.c != nil {
		s.disconnect()
		return errors.New("still connected after LOGOUT")
	}
	return nil
}

// BenchmarkCommand is one kind of command on persistent, logged-in sessions:
// one command at a time on one session (inflight=1), or 4 or 16 sessions
// each with one command in flight at once (inflight=4, 16: the more are in
// flight, the more often a reply finds the process awake instead of waking
// a sleeping thread, the cost that dominates). fetch, select and store
// are the producer's scheduled commands (served and recorded); noop is
// go-imap's bare round trip under the producer's timeout guard, the floor
// under every command.
func BenchmarkCommand(b *testing.B) {
	tg := newBenchTarget(b)
	for _, procs := range procsVariants() {
		for _, inflight := range []int{1, 4, 16} {
			for _, cmd := range []string{"fetch", "select", "store", "noop"} {
				name := fmt.Sprintf("%s/procs=%d/inflight=%d/%s", tg.name, procs, inflight, cmd)
				b.Run(name, func(b *testing.B) { benchCommand(b, tg, procs, inflight, cmd) })
			}
		}
	}
}

func benchCommand(b *testing.B, tg *benchTarget, procs, inflight int, cmd string) {
	defer withProcs(procs)()
	env := tg.env(b)
	ss := make([]*session, inflight)
	for w := range ss {
		ss[w] = newSession(env, w, uint64(w+1))
		if err := ss[w].connect(context.Background()); err != nil {
			b.Fatalf("session.connect() error = %v", err)
		}
		b.Cleanup(ss[w].farewell)
	}
	env.rec.Cut(0, 0, false, messages.Health{}) // forget the set-up
	op, recorded := commandOp(cmd)
	measure(b, tg, inflight, "cmd", time.Microsecond, func(w int) error { return op(ss[w]) })
	checkRecorded(b, env, recorded*b.N)
}

// commandOp returns the operation of cmd on a connected session, and how
// many scheduled commands each records.
func commandOp(cmd string) (op func(*session) error, recorded int) {
	if cmd == "noop" {
		return func(s *session) error {
			if s.c == nil {
				return errors.New("disconnected")
			}
			return s.guard(s.env.cfg.OpTimeout, func() error { return s.c.Noop().Wait() })
		}, 0
	}
	p, err := messages.ParsePhase(cmd)
	if err != nil {
		panic(err)
	}
	return func(s *session) error {
		if s.c == nil {
			return errors.New("disconnected")
		}
		s.serve(job{phase: p, intended: time.Now()})
		return nil
	}, 1
}

// BenchmarkFetchItems splits a FETCH's cost by the items it asks for, one
// command at a time with GOMAXPROCS 1 (the least scheduling noise), on the
// first message of INBOX: the producer's FETCH asks for UID, FLAGS, ENVELOPE
// and BODY.PEEK[]. The difference between two lines is what the client
// spends on an item: reading and parsing it. uid+flags+headers+body asks for
// the envelope's header fields as a raw section instead, which go-imap does
// not parse.
func BenchmarkFetchItems(b *testing.B) {
	tg := newBenchTarget(b)
	for _, it := range fetchItemSets {
		b.Run(tg.name+"/procs=1/"+it.name, func(b *testing.B) {
			defer withProcs(1)()
			s := newSession(tg.env(b), 0, 1)
			if err := s.connect(context.Background()); err != nil {
				b.Fatalf("session.connect() error = %v", err)
			}
			b.Cleanup(s.farewell)
			measure(b, tg, 1, "cmd", time.Microsecond, func(int) error {
				return s.guard(s.env.cfg.OpTimeout, func() error {
					msgs, err := s.c.Fetch(imap.SeqSetNum(1), it.opts).Collect()
					if err == nil && len(msgs) != 1 {
						err = fmt.Errorf("FETCH 1 returned %d messages, want 1", len(msgs))
					}
					return err
				})
			})
		})
	}
}

// fetchItemSets are BenchmarkFetchItems' FETCH items, from the least to the
// producer's.
var fetchItemSets = []struct {
	name string
	opts *imap.FetchOptions
}{
	{"uid", &imap.FetchOptions{UID: true}},
	{"uid+flags", &imap.FetchOptions{UID: true, Flags: true}},
	{"uid+flags+body", &imap.FetchOptions{UID: true, Flags: true, BodySection: []*imap.FetchItemBodySection{{Peek: true}}}},
	{"uid+flags+envelope", &imap.FetchOptions{UID: true, Flags: true, Envelope: true}},
	{"uid+flags+headers+body", &imap.FetchOptions{UID: true, Flags: true, BodySection: []*imap.FetchItemBodySection{
		{Specifier: imap.PartSpecifierHeader, Peek: true, HeaderFields: []string{"Date", "From", "To", "Subject", "Message-ID"}},
		{Peek: true},
	}}},
	{"producer", fetchOptions},
}

// measure runs b.N calls of op, spread over conc goroutines (op(w) runs on
// goroutine w only), and reports the process's CPU per call in unit, named
// "cpu-<unit>/<what>", and Dovecot's when the target is Dovecot.
func measure(b *testing.B, tg *benchTarget, conc int, what string, unit time.Duration, op func(w int) error) {
	srv0, srvOK := tg.serverCPU()
	user0, sys0 := rusage(b)
	b.ResetTimer()
	var next atomic.Int64
	errs := make([]error, conc)
	var wg sync.WaitGroup
	for w := range conc {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if errs[w] = op(w); errs[w] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	user1, sys1 := rusage(b)
	srv1, _ := tg.serverCPU()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	per := func(d time.Duration) float64 { return float64(d) / float64(b.N) / float64(unit) }
	user, sys := user1-user0, sys1-sys0
	b.ReportMetric(per(user+sys), "cpu-"+unitName(unit)+"/"+what)
	b.ReportMetric(100*float64(sys)/float64(max(user+sys, 1)), "sys-%")
	if srvOK {
		b.ReportMetric(per(srv1-srv0), "dovecot-cpu-"+unitName(unit)+"/"+what)
	}
}

// rusage is the CPU time this process has used so far, in user and in
// system (kernel) mode, from getrusage(2).
func rusage(b *testing.B) (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

func unitName(unit time.Duration) string {
	if unit == time.Millisecond {
		return "ms"
	}
	return "µs"
}

// checkRecorded fails the benchmark unless the recorder holds want scheduled
// commands, all of them successful: a benchmark of failing commands
// measures nothing useful.
func checkRecorded(b *testing.B, env *sessionEnv, want int) {
	b.Helper()
	batch := env.rec.Cut(0, time.Second, true, messages.Health{})
	for _, ps := range batch.Phases {
		for _, e := range ps.Errors {
			b.Errorf("phase %v: %d errors of kind %q", ps.Phase, e.Count, e.Kind)
		}
	}
	if batch.Scheduled != uint64(want) || batch.Completed != uint64(want) {
		b.Errorf("recorded %d scheduled, %d completed commands, want %d of each", batch.Scheduled, batch.Completed, want)
	}
}

// procsVariants are the GOMAXPROCS values benchmarks run with: 1 (one OS
// thread runs Go code: fewer cross-thread wake-ups) and Go's default.
func procsVariants() []int {
	if n := runtime.GOMAXPROCS(0); n > 1 {
		return []int{1, n}
	}
	return []int{1}
}

// withProcs sets GOMAXPROCS to n and returns the function that restores it.
func withProcs(n int) func() {
	old := runtime.GOMAXPROCS(n)
	return func() { runtime.GOMAXPROCS(old) }
}
