package producer

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Account is one IMAP login. Password is a secret: the producer never logs it,
// never publishes it, and scrubs it from error samples.
type Account struct {
	User, Password string
}

// String shows the user only, so that an Account printed by mistake (%v, a
// log attribute) does not leak the password.
func (a Account) String() string { return a.User + ":***" }

// Limits of an account source.
const (
	maxAccountLine   = 4096      // bytes in one line of an account file
	maxAccounts      = 1_000_000 // accounts from a file or a template
	maxAccountErrors = 20        // problems listed before ParseAccounts gives up
)

// ParseAccounts reads accounts, one "user:password" per line. The password is
// everything after the first colon, so it may itself hold colons. Blank lines
// and lines starting with '#' (after leading blanks) are skipped; a trailing
// "\r" is dropped. Every problem is reported with its line number, and the
// line itself is never quoted, since it may hold a password. A user listed
// twice is an error. ParseAccounts does no I/O beyond reading r.
func ParseAccounts(r io.Reader) ([]Account, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256), maxAccountLine)
	var accts []Account
	var errs []error
	seen := map[string]int{}
	for line := 1; sc.Scan() && len(errs) < maxAccountErrors; line++ {
		a, ok, err := parseAccountLine(sc.Text())
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("line %d: %w", line, err))
		case !ok:
		case seen[a.User] != 0:
			errs = append(errs, fmt.Errorf("line %d: user %q already on line %d", line, a.User, seen[a.User]))
		case len(accts) >= maxAccounts:
			errs = append(errs, fmt.Errorf("line %d: more than %d accounts", line, maxAccounts))
		default:
			seen[a.User] = line
			accts = append(accts, a)
		}
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, accountReadError(err))
	}
	return accountsResult(accts, errs)
}

func accountReadError(err error) error {
	if errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("a line is longer than %d bytes", maxAccountLine)
	}
	return fmt.Errorf("read: %v", err)
}

func accountsResult(accts []Account, errs []error) ([]Account, error) {
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrBadAccounts, errors.Join(errs...))
	}
	if len(accts) == 0 {
		return nil, fmt.Errorf("%w: no \"user:password\" line", ErrNoAccounts)
	}
	return accts, nil
}

// parseAccountLine returns the account on one line, ok false for a blank or
// comment line, or what is wrong with it (without quoting the password).
func parseAccountLine(s string) (Account, bool, error) {
	s = strings.TrimSuffix(s, "\r")
	if t := strings.TrimSpace(s); t == "" || strings.HasPrefix(t, "#") {
		return Account{}, false, nil
	}
	user, pass, found := strings.Cut(s, ":")
	user = strings.TrimSpace(user)
	switch {
	case !found:
		return Account{}, false, errors.New(`no ":" between user and password`)
	case user == "":
		return Account{}, false, errors.New("empty user")
	case pass == "":
		return Account{}, false, fmt.Errorf("user %q: empty password", user)
	case hasControl(user):
		return Account{}, false, errors.New("user has control characters")
	case hasControl(pass):
		return Account{}, false, fmt.Errorf("user %q: password has control characters", user)
	}
	return Account{User: user, Password: pass}, true, nil
}

func hasControl(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0
}

// templateVerb matches the one integer verb a user template must hold.
var templateVerb = regexp.MustCompile(`%[0-9]*d`)

// TemplateAccounts returns n accounts named fmt.Sprintf(format, i) for i from
// 1 to n, all with password. format must hold exactly one integer verb (%d,
// or with a width such as %04d) and no other verb but "%%". It does no I/O.
func TemplateAccounts(format string, n int, password string) ([]Account, error) {
	if err := checkTemplate(format, n, password); err != nil {
		return nil, err
	}
	accts := make([]Account, n)
	for i := range accts {
		accts[i] = Account{User: fmt.Sprintf(format, i+1), Password: password}
	}
	return accts, nil
}

func checkTemplate(format string, n int, password string) error {
	plain := strings.ReplaceAll(format, "%%", "")
	verbs := len(templateVerb.FindAllString(plain, -1))
	switch {
	case verbs != 1 || strings.Contains(templateVerb.ReplaceAllString(plain, ""), "%"):
		return fmt.Errorf("%w: template %q: want exactly one %%d (e.g. \"user%%d\")", ErrBadAccounts, format)
	case n < 1 || n > maxAccounts:
		return fmt.Errorf("%w: template count %d, want 1..%d", ErrBadAccounts, n, maxAccounts)
	case password == "":
		return fmt.Errorf("%w: template password is empty", ErrBadAccounts)
	case hasControl(format) || hasControl(password):
		return fmt.Errorf("%w: template or password has control characters", ErrBadAccounts)
	}
	return nil
}
