package embedded

import (
	"time"

	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
)

// session is the imapserver.Session of one connection. Before LOGIN it
// holds no user session; after, it delegates to imapmemserver's, adding
// the login cost, the NO faults and the mailbox bound.
type session struct {
	*imapmemserver.UserSession // nil until LOGIN succeeds

	s    *IMAP
	c    *clientConn
	user *imapmemserver.User
}

var _ imapserver.SessionIMAP4rev2 = (*session)(nil)

// newSession is imapserver.Options.NewSession. The server accepted the
// connection through our listener, so its net.Conn is a *clientConn.
func (s *IMAP) newSession(conn *imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
	return &session{s: s, c: conn.NetConn().(*clientConn)}, nil, nil
}

// Login checks the password (bcrypt with cache, or plain), then opens the
// user's mail store. Failures are NO [AUTHENTICATIONFAILED].
func (ss *session) Login(username, password string) error {
	if err := ss.c.pause(ss.s.opts.LoginDelay); err != nil {
		return err
	}
	now := time.Now()
	u, ok := ss.s.users[username]
	if !ok || !ss.s.passwordOK(u, username, password, now) {
		ss.s.stats.loginsFailed.Add(1)
		return imapserver.ErrAuthFailed
	}
	ss.user = u
	ss.UserSession = imapmemserver.NewUserSession(u)
	ss.c.slow.Store(ss.s.IsSlow(username))
	ss.s.stats.loginsOK.Add(1)
	ss.s.loggedIn(ss, SessionInfo{User: username, RemoteAddr: ss.c.remoteStr, LoginAt: now})
	if ss.s.opts.OnLogin != nil {
		ss.s.opts.OnLogin(username, ss.c.remote, now)
	}
	return nil
}

func (s *IMAP) passwordOK(u *imapmemserver.User, name, password string, now time.Time) bool {
	if s.auth == nil {
		return u.Login(name, password) == nil
	}
	return s.auth.check(name, password, now)
}

// Close ends the session; go-imap's server calls it once, as the
// connection's goroutine finishes.
func (ss *session) Close() error {
	var err error
	if ss.UserSession != nil {
		err = ss.UserSession.Close()
	}
	ss.s.sessionDone(ss)
	return err
}
