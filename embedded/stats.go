package embedded

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// IMAPStats is a snapshot of the IMAP server's counters since start.
type IMAPStats struct {
	// Connections is the number of accepted connections.
	Connections uint64
	// Active is the number of connections open now.
	Active int64
	// LoginsOK and LoginsFailed count LOGIN outcomes.
	LoginsOK, LoginsFailed uint64
	// LoginCacheHits counts logins served from the login cache;
	// LoginCacheMisses counts bcrypt comparisons (both are 0 without
	// BcryptCost).
	LoginCacheHits, LoginCacheMisses uint64
	// Commands is the number of commands received, including those later
	// dropped or answered NO.
	Commands uint64
	// CommandsByName splits Commands by upper-case name ("LOGIN",
	// "UID FETCH"…); unknown names count as "OTHER". It is a copy.
	CommandsByName map[string]uint64
	// Dropped counts connections closed on purpose (DropFraction, DropAll).
	Dropped uint64
	// NoReplies counts commands answered NO by NoFraction.
	NoReplies uint64
	// Delivered counts messages stored by LMTP, one per recipient.
	Delivered uint64
}

// SessionInfo describes one logged-in session.
type SessionInfo struct {
	// User is the account name given to LOGIN.
	User string
	// RemoteAddr is the client's "ip:port".
	RemoteAddr string
	// LoginAt is when LOGIN succeeded.
	LoginAt time.Time
}

// counters accumulate cheaply on the hot path; snapshot derives IMAPStats.
type counters struct {
	connections, loginsOK, loginsFailed atomic.Uint64
	cacheHits, cacheMisses              atomic.Uint64
	commands, dropped, noReplies        atomic.Uint64
	delivered                           atomic.Uint64
	active                              atomic.Int64

	mu     sync.Mutex
	byName map[string]uint64
}

func (c *counters) command(name string) {
	c.commands.Add(1)
	c.mu.Lock()
	if c.byName == nil {
		c.byName = make(map[string]uint64)
	}
	c.byName[name]++
	c.mu.Unlock()
}

func (c *counters) snapshot() IMAPStats {
	c.mu.Lock()
	byName := maps.Clone(c.byName)
	c.mu.Unlock()
	if byName == nil {
		byName = map[string]uint64{}
	}
	return IMAPStats{
		Connections: c.connections.Load(), Active: c.active.Load(),
		LoginsOK: c.loginsOK.Load(), LoginsFailed: c.loginsFailed.Load(),
		LoginCacheHits: c.cacheHits.Load(), LoginCacheMisses: c.cacheMisses.Load(),
		Commands: c.commands.Load(), CommandsByName: byName,
		Dropped: c.dropped.Load(), NoReplies: c.noReplies.Load(), Delivered: c.delivered.Load(),
	}
}

// Stats returns a snapshot of the server's counters. It is safe to call
// at any time, also after Close.
func (s *IMAP) Stats() IMAPStats { return s.stats.snapshot() }

// Sessions lists the sessions logged in now, oldest login first.
func (s *IMAP) Sessions() []SessionInfo {
	s.mu.Lock()
	out := slices.Collect(maps.Values(s.sessions))
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b SessionInfo) int {
		if c := a.LoginAt.Compare(b.LoginAt); c != 0 {
			return c
		}
		return strings.Compare(a.User+a.RemoteAddr, b.User+b.RemoteAddr)
	})
	return out
}
