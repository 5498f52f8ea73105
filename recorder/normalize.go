package recorder

import (
	"regexp"
	"strings"
	"sync"

	"github.com/imapload/imapload/messages"
)

// Rules that turn an error message into its kind, applied in order. The point
// is to group "the same failure" while keeping different failures apart:
// "NO [AUTHENTICATIONFAILED] …", "connection reset by peer" and "i/o timeout"
// stay distinct; tags, numbers, UIDs, addresses, hex ids and quoted text go.
var normalizeRules = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"(?:[^"\\]|\\.)*"`), `"…"`},                             // quoted text
	{regexp.MustCompile(`'[^']*'`), `'…'`},                                       // single-quoted text
	{regexp.MustCompile(`[\w.+-]+@[\w-]+(?:\.[\w-]+)+`), "<email>"},              // mail addresses
	{regexp.MustCompile(`\[[0-9a-fA-F:]*:[0-9a-fA-F:]*\](?::\d+)?`), "<addr>"},   // [ipv6]:port
	{regexp.MustCompile(`\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b`), "<addr>"},       // ipv4:port
	{regexp.MustCompile(`(?m)^[A-Za-z]*\d+[A-Za-z0-9.]*\s+(OK|NO|BAD)\b`), "$1"}, // leading IMAP tag
	{regexp.MustCompile(`\b(?:0x)?[0-9a-fA-F]*\d[0-9a-fA-F]*[a-fA-F][0-9a-fA-F]*\b|\b(?:0x)?[0-9a-fA-F]*[a-fA-F][0-9a-fA-F]*\d[0-9a-fA-F]*\b`), "<hex>"},
	{regexp.MustCompile(`\d+(?:\.\d+)?`), "<n>"}, // numbers, UIDs, durations' digits
	{regexp.MustCompile(`\s+`), " "},
}

// Normalize returns the kind of an error message: the message with volatile
// parts replaced by placeholders, trimmed to messages.MaxKindBytes.
func Normalize(msg string) string {
	s := msg
	for _, r := range normalizeRules {
		s = r.re.ReplaceAllString(s, r.with)
	}
	s = strings.TrimSpace(s)
	if s == "" {
		s = "unknown error"
	}
	return truncate(s, messages.MaxKindBytes)
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n]
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// kindCache remembers recent message → kind results: under an outage the same
// few messages repeat thousands of times a second.
type kindCache struct {
	mu sync.Mutex
	m  map[string]string
}

const kindCacheSize = 1024

func (c *kindCache) kind(msg string) string {
	c.mu.Lock()
	k, ok := c.m[msg]
	c.mu.Unlock()
	if ok {
		return k
	}
	k = Normalize(msg)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= kindCacheSize {
		c.m = make(map[string]string, kindCacheSize)
	}
	c.m[msg] = k
	c.mu.Unlock()
	return k
}
