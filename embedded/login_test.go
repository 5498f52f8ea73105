package embedded_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/imapload/imapload/embedded"
)

// loginTime dials, logs in as user1 with password and returns how long
// LOGIN took and its error.
func loginTime(t *testing.T, s *embedded.IMAP, password string) (time.Duration, error) {
	t.Helper()
	c := dial(t, s)
	if err := c.WaitGreeting(); err != nil {
		t.Fatalf("WaitGreeting() error = %v", err)
	}
	begin := time.Now()
	err := c.Login("user1", password).Wait()
	return time.Since(begin), err
}

// bcryptCostFor returns the bcrypt cost whose comparison takes about
// target on this machine (race detector included), so the test neither
// crawls nor loses the slow login in the noise.
func bcryptCostFor(t *testing.T, target time.Duration) int {
	t.Helper()
	begin := time.Now()
	if _, err := bcrypt.GenerateFromPassword([]byte("x"), bcrypt.MinCost); err != nil {
		t.Fatalf("bcrypt.GenerateFromPassword() error = %v", err)
	}
	base := max(time.Since(begin), 50*time.Microsecond)
	cost := bcrypt.MinCost + int(math.Ceil(math.Log2(float64(target)/float64(base))))
	return min(max(cost, bcrypt.MinCost), 14)
}

func TestIMAPLoginCache(t *testing.T) {
	cost := bcryptCostFor(t, 40*time.Millisecond)
	s := startIMAP(t, &embedded.IMAPOptions{Users: 3, BcryptCost: cost})
	first, err := loginTime(t, s, "secret")
	if err != nil {
		t.Fatalf("first Login() error = %v", err)
	}
	second, err := loginTime(t, s, "secret")
	if err != nil {
		t.Fatalf("second Login() error = %v", err)
	}
	t.Logf("bcrypt cost %d: first login %v, second %v", cost, first, second)
	if first < 20*time.Millisecond || second >= first/4 {
		t.Errorf("Login() took %v then %v, want >= 20ms then < %v", first, second, first/4)
	}
	if st := s.Stats(); st.LoginCacheMisses != 1 || st.LoginCacheHits != 1 || st.LoginsOK != 2 {
		t.Errorf("Stats() misses %d, hits %d, ok %d; want 1, 1, 2", st.LoginCacheMisses, st.LoginCacheHits, st.LoginsOK)
	}
	if _, err := loginTime(t, s, "wrong"); err == nil || !strings.Contains(err.Error(), "AUTHENTICATIONFAILED") {
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
				if _, err := loginTime(t, s, pw); (err != nil) != tt.wantErrs[i] {
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
