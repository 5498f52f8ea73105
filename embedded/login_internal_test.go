package embedded

import (
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// TestAuthenticatorCost: every account's hash is a bcrypt hash of the
// configured cost (bcrypt's minimum below it), so a login that misses the
// cache pays that comparison. Counting, not timing, says it was paid.
func TestAuthenticatorCost(t *testing.T) {
	tests := []struct {
		name       string
		cost, want int
	}{
		{name: "configured", cost: 6, want: 6},
		{name: "below bcrypt's minimum", cost: 2, want: bcrypt.MinCost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := newAuthenticator(map[string]string{"u1": "pw", "u2": "pw"}, tt.cost, time.Minute, &counters{})
			if err != nil {
				t.Fatalf("newAuthenticator() error = %v", err)
			}
			for user, h := range a.hashes {
				if got, err := bcrypt.Cost(h); err != nil || got != tt.want {
					t.Errorf("bcrypt.Cost(hash of %s) = %d, %v; want %d", user, got, err, tt.want)
				}
			}
		})
	}
}

// TestAuthenticatorCache walks one account through the cache with time as
// an argument: a miss (a bcrypt comparison) fills it, a hit until the TTL
// is over, a miss again at its end; a wrong password never hits.
func TestAuthenticatorCache(t *testing.T) {
	const ttl = time.Minute
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var st counters
	a, err := newAuthenticator(map[string]string{"u1": "pw"}, bcrypt.MinCost, ttl, &st)
	if err != nil {
		t.Fatalf("newAuthenticator() error = %v", err)
	}
	steps := []struct {
		name, user, password string
		at                   time.Duration // after t0
		want                 bool
		hits, misses         uint64 // counted so far
	}{
		{name: "first login", user: "u1", password: "pw", want: true, misses: 1},
		{name: "cached", user: "u1", password: "pw", at: ttl - time.Nanosecond, want: true, hits: 1, misses: 1},
		{name: "wrong password", user: "u1", password: "nope", at: time.Second, want: false, hits: 1, misses: 2},
		{name: "expired", user: "u1", password: "pw", at: ttl, want: true, hits: 1, misses: 3},
		{name: "refilled", user: "u1", password: "pw", at: ttl + time.Second, want: true, hits: 2, misses: 3},
		{name: "unknown user", user: "u2", password: "pw", at: ttl, want: false, hits: 2, misses: 3},
	}
	for _, s := range steps {
		if got := a.check(s.user, s.password, t0.Add(s.at)); got != s.want {
			t.Errorf("%s: check(%s, %q, t0+%v) = %v, want %v", s.name, s.user, s.password, s.at, got, s.want)
		}
		if h, m := st.cacheHits.Load(), st.cacheMisses.Load(); h != s.hits || m != s.misses {
			t.Errorf("%s: hits %d, misses %d; want %d, %d", s.name, h, m, s.hits, s.misses)
		}
	}
}

// TestIMAPLoginCacheTTL runs the same through the server on a synctest
// bubble's clock: LOGIN is served from the cache until the TTL is over.
func TestIMAPLoginCacheTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = time.Minute
		s := startPipeIMAP(t, &IMAPOptions{Users: 1, BcryptCost: bcrypt.MinCost, LoginCacheTTL: ttl})
		steps := []struct {
			wait         time.Duration // before the login
			hits, misses uint64        // counted after it
		}{{0, 0, 1}, {ttl - time.Nanosecond, 1, 1}, {time.Nanosecond, 1, 2}, {0, 2, 2}}
		for i, step := range steps {
			time.Sleep(step.wait)
			s.login(t, "user1")
			if st := s.Stats(); st.LoginCacheHits != step.hits || st.LoginCacheMisses != step.misses {
				t.Errorf("login %d: Stats() hits %d, misses %d; want %d, %d", i+1, st.LoginCacheHits, st.LoginCacheMisses, step.hits, step.misses)
			}
		}
	})
}
