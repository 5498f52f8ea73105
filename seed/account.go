package seed

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// logoutTimeout bounds the wait for LOGOUT's answer, which nothing needs.
const logoutTimeout = 5 * time.Second

// seedAccount fills every folder of a to its target over one connection.
// It stops between two APPENDs when ctx ends, and logs out.
func (s *Seeder) seedAccount(ctx context.Context, a Account) error {
	c, err := s.dial(ctx, a)
	if err != nil {
		return err
	}
	defer func() {
		_ = guard(c, min(s.o.OpTimeout, logoutTimeout), func() error { return c.Logout().Wait() })
		c.Close()
	}()
	appended := false
	for _, t := range s.o.Targets {
		n, err := s.fillFolder(ctx, c, a, t)
		appended = appended || n > 0
		if err != nil {
			return err
		}
	}
	if !appended {
		s.full.Add(1)
	}
	return nil
}

// fillFolder appends to t.Folder the messages it lacks and returns how
// many it appended.
func (s *Seeder) fillFolder(ctx context.Context, c *imapclient.Client, a Account, t Target) (int, error) {
	have, err := s.count(c, t.Folder)
	if err != nil {
		return 0, err
	}
	p, closeW, err := s.writer(ctx, c, a, t.Folder)
	if err != nil {
		return 0, err
	}
	defer closeW()
	i := have
	for ; i < t.Count && ctx.Err() == nil; i++ {
		m, err := s.o.Source.Message(Key{Account: a.User, Folder: t.Folder, Index: i})
		if err == nil {
			err = p.send(m)
		}
		if err != nil {
			return p.done(), err
		}
	}
	if err := p.drain(); err != nil {
		return p.done(), err
	}
	if i < t.Count {
		return p.done(), ctx.Err() // stopped short: the messages sent are in
	}
	return p.done(), nil
}

// count returns the messages folder holds (STATUS MESSAGES), creating it
// when the server answers that it does not exist (any NO: the CREATE's own
// answer says more if it fails too).
func (s *Seeder) count(c *imapclient.Client, folder string) (int, error) {
	var st *imap.StatusData
	err := guard(c, s.o.OpTimeout, func() (err error) {
		st, err = c.Status(folder, &imap.StatusOptions{NumMessages: true}).Wait()
		return err
	})
	var ie *imap.Error
	switch {
	case err == nil && st.NumMessages != nil:
		return int(*st.NumMessages), nil
	case err == nil:
		return 0, fmt.Errorf("status %s: the server sent no MESSAGES count", folder)
	case !errors.As(err, &ie):
		return 0, fmt.Errorf("status %s: %w", folder, err)
	}
	if err := guard(c, s.o.OpTimeout, func() error { return c.Create(folder, nil).Wait() }); err != nil {
		return 0, fmt.Errorf("create %s: %w", folder, err)
	}
	s.created.Add(1)
	return 0, nil
}
