package seed

import (
	"fmt"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// A connection sends up to Options.Pipeline APPENDs before it waits for the
// first answer (RFC 9051 §5.5 allows pipelining). With LITERAL+ (RFC 7888),
// which Dovecot offers, a message goes out without waiting for a
// continuation, so one connection is no longer held to one message per
// round trip; without it, imapclient waits for each "+" as it must. On
// loopback Dovecot it bought nothing measurable (BENCHMARKS.md), so one at
// a time is the default; it is for servers a round trip away.

// appender pipelines the APPENDs of one folder over one connection.
type appender struct {
	s        *Seeder
	c        *imapclient.Client
	folder   string
	inflight []sent
	appended int // answered OK
}

// sent is an APPEND whose message is out and whose answer is awaited.
type sent struct {
	cmd  *imapclient.AppendCommand
	size int
}

// send writes m's APPEND and, when the pipeline is full, waits for the
// oldest answer.
func (p *appender) send(m Message) error {
	var cmd *imapclient.AppendCommand
	err := guard(p.c, p.s.o.OpTimeout, func() error {
		cmd = p.c.Append(p.folder, int64(len(m.Body)), &imap.AppendOptions{Flags: m.Flags, Time: m.Date})
		if _, err := cmd.Write(m.Body); err != nil {
			cmd.Close()
			return err
		}
		return cmd.Close()
	})
	if err != nil {
		return p.fail(err)
	}
	p.inflight = append(p.inflight, sent{cmd, len(m.Body)})
	if len(p.inflight) >= p.s.o.Pipeline {
		return p.waitOldest()
	}
	return nil
}

// waitOldest waits for the answer of the oldest APPEND in flight.
func (p *appender) waitOldest() error {
	a := p.inflight[0]
	p.inflight = p.inflight[1:]
	err := guard(p.c, p.s.o.OpTimeout, func() error {
		_, err := a.cmd.Wait()
		return err
	})
	if err != nil {
		return p.fail(err)
	}
	p.appended++
	p.s.messages.Add(1)
	p.s.bytes.Add(int64(a.size))
	return nil
}

// drain waits for every APPEND in flight.
func (p *appender) drain() error {
	for len(p.inflight) > 0 {
		if err := p.waitOldest(); err != nil {
			return err
		}
	}
	return nil
}

// fail names the folder; the connection is given up, so the answers still
// in flight are not awaited.
func (p *appender) fail(err error) error {
	p.inflight = nil
	return fmt.Errorf("append to %s: %w", p.folder, err)
}
