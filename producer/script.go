package producer

import (
	"context"
	"time"

	"github.com/imapload/imapload/messages"
)

// Sessions of a scripted step (messages.Script): each job is a whole
// session, served by whichever session slot takes it from the queue.

// runScripts serves a scripted step's queue until it is closed and drained
// or ctx ends. Between jobs the slot holds no connection: a scripted session
// never reconnects on its own.
func (s *session) runScripts(ctx context.Context, queue <-chan job) {
	for {
		select {
		case j, ok := <-queue:
			if !ok {
				return
			}
			if ctx.Err() != nil {
				s.env.drop(j)
				return
			}
			s.script(ctx, j)
		case <-ctx.Done():
			return
		}
	}
}

// script runs session j: dial and LOGIN (the dial measured from j's
// intended start), then each command of the script as soon as the previous
// one has answered, as a client does; each command's intended start is the
// previous one's end. A session whose set-up failed, or whose connection
// ended before its script did, does not send the rest: those commands fail
// with a generator kind (the server's error is already recorded where it
// happened). A script without LOGOUT ends by closing the connection.
func (s *session) script(ctx context.Context, j job) {
	if s.logIn(ctx, j.intended) != nil {
		s.unsent(j.script, j.intended, errNoSession)
		return
	}
	at := time.Now()
	for i, p := range j.script {
		if s.c == nil {
			s.unsent(j.script[i:], at, errSessionEnded)
			return
		}
		s.serve(job{phase: p, intended: at})
		at = time.Now()
	}
	s.disconnect()
}

// unsent records the commands of a script that were not sent, intended at
// t, as failed with err.
func (s *session) unsent(script messages.Script, t time.Time, err error) {
	for _, p := range script {
		s.env.scheduled(job{phase: p, intended: t}, t, t, err)
	}
}
