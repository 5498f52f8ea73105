package producer

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseAccounts(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Account
		wantErr error
		errHas  []string // fragments the error must hold
	}{
		{name: "one per line", in: "alice:pw1\nbob:pw2\n",
			want: []Account{{"alice", "pw1"}, {"bob", "pw2"}}},
		{name: "comments, blanks, CRLF and no final newline", in: "# fleet\r\n\r\n  # indented comment\nalice:pw1\r\n   \nbob:pw2",
			want: []Account{{"alice", "pw1"}, {"bob", "pw2"}}},
		{name: "password keeps colons, hashes and spaces", in: "alice:a:b#c d \n",
			want: []Account{{"alice", "a:b#c d "}}},
		{name: "blanks around the user are trimmed", in: "  alice :pw\n",
			want: []Account{{"alice", "pw"}}},
		{name: "no colon", in: "alice:pw\nsecretline\n",
			wantErr: ErrBadAccounts, errHas: []string{"line 2", `no ":"`}},
		{name: "empty user", in: ":pw\n",
			wantErr: ErrBadAccounts, errHas: []string{"line 1", "empty user"}},
		{name: "empty password", in: "alice:\n",
			wantErr: ErrBadAccounts, errHas: []string{"line 1", "empty password"}},
		{name: "duplicate user", in: "alice:pw1\nbob:x\nalice:pw2\n",
			wantErr: ErrBadAccounts, errHas: []string{"line 3", "already on line 1"}},
		{name: "control character", in: "alice:p\x00w\n",
			wantErr: ErrBadAccounts, errHas: []string{"line 1", "control"}},
		{name: "every problem listed", in: "x\n:y\nz:\n",
			wantErr: ErrBadAccounts, errHas: []string{"line 1", "line 2", "line 3"}},
		{name: "line too long", in: "alice:" + strings.Repeat("p", maxAccountLine) + "\n",
			wantErr: ErrBadAccounts, errHas: []string{"longer than"}},
		{name: "empty", in: "", wantErr: ErrNoAccounts},
		{name: "only comments", in: "# nobody\n\n", wantErr: ErrNoAccounts},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAccounts(strings.NewReader(tt.in))
			if !errors.Is(err, tt.wantErr) || (err != nil) != (tt.wantErr != nil) {
				t.Fatalf("ParseAccounts() error = %v, want %v", err, tt.wantErr)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseAccounts() = %v, want %v", got, tt.want)
			}
			for _, frag := range tt.errHas {
				if !strings.Contains(err.Error(), frag) {
					t.Errorf("ParseAccounts() error = %q, want it to mention %q", err, frag)
				}
			}
		})
	}
}

// TestParseAccountsNeverQuotesPasswords checks that errors name lines, not
// their content, which may be a password.
func TestParseAccountsNeverQuotesPasswords(t *testing.T) {
	for _, in := range []string{"hunter2secret\n", "alice:hunter2secret\nalice:hunter2secret\n", "bob:hunter2secret\x01\n"} {
		_, err := ParseAccounts(strings.NewReader(in))
		if err == nil || strings.Contains(err.Error(), "hunter2secret") {
			t.Errorf("ParseAccounts(%q) error = %v, want an error that does not quote the password", in, err)
		}
	}
}

func TestAccountStringHidesPassword(t *testing.T) {
	if s := (Account{User: "alice", Password: "hunter2"}).String(); strings.Contains(s, "hunter2") {
		t.Errorf("Account.String() = %q, want no password", s)
	}
}

func FuzzParseAccounts(f *testing.F) {
	for _, s := range []string{"alice:pw\n", "# c\nbob:p:w\r\n", ":\n", "x", "a:b\na:c\n", "\x00:\x01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		accts, err := ParseAccounts(strings.NewReader(in))
		if err != nil {
			if len(accts) != 0 {
				t.Fatalf("ParseAccounts() = %d accounts and error %v", len(accts), err)
			}
			if !errors.Is(err, ErrBadAccounts) && !errors.Is(err, ErrNoAccounts) {
				t.Fatalf("ParseAccounts() error = %v, want ErrBadAccounts or ErrNoAccounts", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, a := range accts {
			if a.User == "" || a.Password == "" || hasControl(a.User) || hasControl(a.Password) || seen[a.User] {
				t.Fatalf("ParseAccounts() gave account %q with an empty, duplicate or control-laden field", a.User)
			}
			seen[a.User] = true
		}
	})
}

func TestTemplateAccounts(t *testing.T) {
	tests := []struct {
		name     string
		format   string
		n        int
		password string
		want     []Account
		wantErr  bool
	}{
		{name: "plain", format: "user%d", n: 3, password: "pw",
			want: []Account{{"user1", "pw"}, {"user2", "pw"}, {"user3", "pw"}}},
		{name: "width", format: "u%03d@example.org", n: 1, password: "pw", want: []Account{{"u001@example.org", "pw"}}},
		{name: "literal percent", format: "%%x%d", n: 1, password: "pw", want: []Account{{"%x1", "pw"}}},
		{name: "no verb", format: "user", n: 1, password: "pw", wantErr: true},
		{name: "escaped verb only", format: "user%%d", n: 1, password: "pw", wantErr: true},
		{name: "two verbs", format: "u%dx%d", n: 1, password: "pw", wantErr: true},
		{name: "string verb", format: "user%s", n: 1, password: "pw", wantErr: true},
		{name: "extra verb", format: "user%d%v", n: 1, password: "pw", wantErr: true},
		{name: "zero count", format: "user%d", n: 0, password: "pw", wantErr: true},
		{name: "too many", format: "user%d", n: maxAccounts + 1, password: "pw", wantErr: true},
		{name: "empty password", format: "user%d", n: 1, password: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := TemplateAccounts(tt.format, tt.n, tt.password)
			if (err != nil) != tt.wantErr || (err != nil && !errors.Is(err, ErrBadAccounts)) {
				t.Fatalf("TemplateAccounts(%q, %d) error = %v, want error %v (ErrBadAccounts)", tt.format, tt.n, err, tt.wantErr)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("TemplateAccounts(%q, %d) = %v, want %v", tt.format, tt.n, got, tt.want)
			}
		})
	}
}
