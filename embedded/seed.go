package embedded

import (
	"bytes"
	"fmt"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
)

// UserName returns the name of seeded account i (numbered from 1) under the
// default UserFormat, "user%d". Use IMAP.UserName for a server started with
// another format.
func UserName(i int) string { return fmt.Sprintf(defaultUserFormat, i) }

// UserName returns the name of this server's seeded account i (from 1).
func (s *IMAP) UserName(i int) string { return fmt.Sprintf(s.opts.UserFormat, i) }

// Password returns the password of every seeded account.
func (s *IMAP) Password() string { return s.opts.Password }

// seedUsers creates the accounts, each with an INBOX holding the seed
// messages, and returns them by name. The memory server is not consulted
// afterwards: sessions are built straight from these users.
func seedUsers(o *IMAPOptions) (map[string]*imapmemserver.User, error) {
	users := make(map[string]*imapmemserver.User, o.Users)
	for i := 1; i <= o.Users; i++ {
		name := fmt.Sprintf(o.UserFormat, i)
		u := imapmemserver.NewUser(name, o.Password)
		if err := u.Create("INBOX", nil); err != nil {
			return nil, fmt.Errorf("embedded: seed %s: %w", name, err)
		}
		for j := 1; j <= o.SeedMessages; j++ {
			if _, err := u.Append("INBOX", bytes.NewReader(SeedMessage(name, j)), &imap.AppendOptions{}); err != nil {
				return nil, fmt.Errorf("embedded: seed %s message %d: %w", name, j, err)
			}
		}
		users[name] = u
	}
	return users, nil
}

// SeedMessage returns the n-th seeded message of user: a small RFC 5322
// text message with CRLF line endings.
func SeedMessage(user string, n int) []byte {
	date := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Minute)
	return fmt.Appendf(nil, "From: Seeder <seeder@example.org>\r\n"+
		"To: %[1]s <%[1]s@example.org>\r\n"+
		"Subject: seed message %[2]d\r\n"+
		"Date: %[3]s\r\n"+
		"Message-ID: <seed-%[2]d.%[1]s@example.org>\r\n"+
		"Content-Type: text/plain; charset=utf-8\r\n"+
		"\r\n"+
		"Hello %[1]s, this is seed message %[2]d.\r\n", user, n, date.Format(time.RFC1123Z))
}
