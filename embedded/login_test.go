package embedded_test

import (
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
)

// loginAs dials and logs in as user1 with password, returning LOGIN's error.
func loginAs(t *testing.T, s *embedded.IMAP, password string) error {
	t.Helper()
	c := dial(t, s)
	if err := c.WaitGreeting(); err != nil {
		t.Fatalf("WaitGreeting() error = %v", err)
	}
	return c.Login("user1", password).Wait()
}

// TestIMAPLoginCache: with BcryptCost, the first login is a cache miss (a
// bcrypt comparison), the second a hit, a wrong password fails. That a miss
// pays the configured cost is TestAuthenticatorCost's; the TTL is
// TestIMAPLoginCacheTTL's, on a synctest bubble's clock.
func TestIMAPLoginCache(t *testing.T) {
	s := startIMAP(t, &embedded.IMAPOptions{Users: 3, BcryptCost: 6})
	for i := range 2 {
		if err := loginAs(t, s, "secret"); err != nil {
			t.Fatalf("Login() %d error = %v", i+1, err)
		}
	}
	if st := s.Stats(); st.LoginCacheMisses != 1 || st.LoginCacheHits != 1 || st.LoginsOK != 2 {
		t.Errorf("Stats() misses %d, hits %d, ok %d; want 1, 1, 2", st.LoginCacheMisses, st.LoginCacheHits, st.LoginsOK)
	}
	if err := loginAs(t, s, "wrong"); err == nil || !strings.Contains(err.Error(), "AUTHENTICATIONFAILED") {
		t.Errorf("Login(wrong password) error = %v, want AUTHENTICATIONFAILED", err)
	}
	if st := s.Stats(); st.LoginsFailed != 1 {
		t.Errorf("Stats().LoginsFailed = %d, want 1", st.LoginsFailed)
	}
}

func TestIMAPLoginOutcomes(t *testing.T) {
	tests := []struct {
		name       string
		opts       embedded.IMAPOptions
		passwords  []string // logged in as user1, in order
		wantErrs   []bool
		wantHits   uint64
		wantMisses uint64
	}{
		{name: "plain passwords use no cache", opts: embedded.IMAPOptions{},
			passwords: []string{"secret", "secret", "nope"}, wantErrs: []bool{false, false, true}},
		{name: "expired cache entry", opts: embedded.IMAPOptions{BcryptCost: 4, LoginCacheTTL: time.Nanosecond},
			passwords: []string{"secret", "secret"}, wantErrs: []bool{false, false}, wantMisses: 2},
		{name: "wrong password misses the cache", opts: embedded.IMAPOptions{BcryptCost: 4},
			passwords: []string{"secret", "nope", "secret"}, wantErrs: []bool{false, true, false}, wantHits: 1, wantMisses: 2},
		{name: "custom password", opts: embedded.IMAPOptions{BcryptCost: 4, Password: "pässword with spaces"},
			passwords: []string{"pässword with spaces", "secret"}, wantErrs: []bool{false, true}, wantMisses: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startIMAP(t, &tt.opts)
			for i, pw := range tt.passwords {
				if err := loginAs(t, s, pw); (err != nil) != tt.wantErrs[i] {
					t.Errorf("Login(user1, %q) error = %v, want error %v", pw, err, tt.wantErrs[i])
				}
			}
			if st := s.Stats(); st.LoginCacheHits != tt.wantHits || st.LoginCacheMisses != tt.wantMisses {
				t.Errorf("Stats() hits %d, misses %d; want %d, %d", st.LoginCacheHits, st.LoginCacheMisses, tt.wantHits, tt.wantMisses)
			}
		})
	}
}

func TestIMAPUnknownUser(t *testing.T) {
	s := startIMAP(t, &embedded.IMAPOptions{Users: 2, BcryptCost: 4})
	c := dial(t, s)
	if err := c.Login("user3", "secret").Wait(); err == nil || !strings.Contains(err.Error(), "AUTHENTICATIONFAILED") {
		t.Errorf("Login(user3) error = %v, want AUTHENTICATIONFAILED", err)
	}
}
