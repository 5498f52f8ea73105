package embedded

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// authenticator checks LOGIN passwords against bcrypt hashes and keeps a
// login cache, as production IMAP servers (Dovecot's auth cache) do: an
// account's first login costs a bcrypt comparison, later logins with the
// same password within the TTL cost a SHA-256, so login latency is
// bimodal.
type authenticator struct {
	hashes map[string][]byte // user → bcrypt hash; read-only after start
	ttl    time.Duration
	stats  *counters

	mu    sync.Mutex
	cache map[string]cachedLogin
}

// cachedLogin is a successful login remembered until expires.
type cachedLogin struct {
	sum     [sha256.Size]byte
	expires time.Time
}

// newAuthenticator hashes each distinct password once: seeding a thousand
// accounts that share a password costs one bcrypt.
func newAuthenticator(passwords map[string]string, cost int, ttl time.Duration, stats *counters) (*authenticator, error) {
	a := &authenticator{hashes: make(map[string][]byte, len(passwords)), ttl: ttl,
		stats: stats, cache: make(map[string]cachedLogin)}
	byPassword := make(map[string][]byte)
	for user, pw := range passwords {
		h, ok := byPassword[pw]
		if !ok {
			var err error
			if h, err = bcrypt.GenerateFromPassword([]byte(pw), max(cost, bcrypt.MinCost)); err != nil {
				return nil, fmt.Errorf("embedded: hash password: %w", err)
			}
			byPassword[pw] = h
		}
		a.hashes[user] = h
	}
	return a, nil
}

// check reports whether password is user's, consulting the cache first.
func (a *authenticator) check(user, password string, now time.Time) bool {
	hash, ok := a.hashes[user]
	if !ok {
		return false
	}
	sum := sha256.Sum256([]byte(password))
	if a.cached(user, sum, now) {
		a.stats.cacheHits.Add(1)
		return true
	}
	a.stats.cacheMisses.Add(1)
	if bcrypt.CompareHashAndPassword(hash, []byte(password)) != nil {
		return false
	}
	a.mu.Lock()
	a.cache[user] = cachedLogin{sum: sum, expires: now.Add(a.ttl)}
	a.mu.Unlock()
	return true
}

func (a *authenticator) cached(user string, sum [sha256.Size]byte, now time.Time) bool {
	a.mu.Lock()
	e, ok := a.cache[user]
	a.mu.Unlock()
	return ok && now.Before(e.expires) && subtle.ConstantTimeCompare(e.sum[:], sum[:]) == 1
}
