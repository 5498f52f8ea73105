package bus

import (
	"fmt"
	"net/url"
	"time"

	"github.com/nats-io/nats.go"
)

// Connect dials NATS at url with the client name name. Credentials may come in
// the URL (nats://user:pass@host) or in creds (a .creds file path); neither
// ever appears in an error this returns (see Redact).
func Connect(serverURL, name, creds string, extra ...nats.Option) (*nats.Conn, error) {
	opts := []nats.Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.ReconnectJitter(250*time.Millisecond, time.Second),
		nats.Timeout(5 * time.Second),
	}
	if creds != "" {
		opts = append(opts, nats.UserCredentials(creds))
	}
	nc, err := nats.Connect(serverURL, append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("bus: connect to %s: %w", Redact(serverURL), err)
	}
	return nc, nil
}

// Redact returns a NATS URL list with any user info replaced by "***", for logs.
func Redact(serverURLs string) string {
	out := []byte{}
	start := 0
	for i := 0; i <= len(serverURLs); i++ {
		if i == len(serverURLs) || serverURLs[i] == ',' {
			out = append(out, redactOne(serverURLs[start:i])...)
			if i < len(serverURLs) {
				out = append(out, ',')
			}
			start = i + 1
		}
	}
	return string(out)
}

func redactOne(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		if err != nil {
			return "<unparseable url>"
		}
		return s
	}
	u.User = url.User("***")
	return u.String()
}
