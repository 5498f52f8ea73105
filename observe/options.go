package observe

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"time"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/messages"
)

// Options configure an Observer. Endpoints is required; every zero field
// means its default.
type Options struct {
	// ID names the observer in subjects and results: 1–64 characters of
	// [A-Za-z0-9_-] (default: the host name, made a valid id).
	ID string
	// Endpoints are the metrics URLs scraped during each step's window
	// (http or https): node_exporter, Dovecot's OpenMetrics listener, the
	// embedded server's. At least one, at most messages.MaxEndpoints.
	Endpoints []string
	// Metrics names further metrics to keep as they are, beside the figures
	// derived from node_exporter's, Dovecot's and the embedded server's.
	Metrics []string
	// Interval is the time between two scrapes of an endpoint (default 1s,
	// at least 100ms).
	Interval time.Duration
	// Timeout bounds one scrape (default: Interval, at least 1s). A scrape
	// that takes longer fails and is counted.
	Timeout time.Duration
	// MaxBytes caps one scrape's body (default 16 MiB): a larger one fails.
	MaxBytes int64
	// PublishWait bounds the publishing of a step's figures, retries
	// included (default 30s).
	PublishWait time.Duration
	// Client does the scrapes (default: one of the observer's own, without
	// proxies from the environment).
	Client *http.Client
	// Bus sizes the stream the observer ensures (nil: defaults).
	Bus *bus.Options
	// Logger receives the observer's log (default: discarded).
	Logger *slog.Logger
	// OnFigures, if set, is called with each step's figures once they are
	// published. It runs on the step's goroutine and must be quick.
	OnFigures func(*messages.ServerFigures)
}

// Bounds of the options.
const (
	minInterval     = 100 * time.Millisecond
	defaultMaxBytes = 16 << 20
)

// Check reports, as New would, the first option that cannot run (an error
// wrapping ErrOptions), before any connection is made. It does no I/O.
func (o *Options) Check() error {
	_, err := o.normalized()
	return err
}

// normalized returns a copy of o with every default filled in, or an
// error wrapping ErrOptions naming the first bad option.
func (o *Options) normalized() (Options, error) {
	var c Options
	if o != nil {
		c = *o
	}
	c.ID = orDefault(c.ID, defaultID)
	c.Interval = orDuration(c.Interval, time.Second)
	c.Timeout = orDuration(c.Timeout, max(c.Interval, time.Second))
	c.PublishWait = orDuration(c.PublishWait, 30*time.Second)
	if c.MaxBytes == 0 {
		c.MaxBytes = defaultMaxBytes
	}
	if c.Client == nil {
		c.Client = &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 2}}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c.Endpoints, c.Metrics = slices.Clone(c.Endpoints), slices.Clone(c.Metrics)
	return c, c.check()
}

// check reports the first option out of range.
func (o *Options) check() error {
	switch {
	case messages.ValidName(o.ID) != nil:
		return fmt.Errorf("%w: id: %w", ErrOptions, messages.ValidName(o.ID))
	case len(o.Endpoints) == 0 || len(o.Endpoints) > messages.MaxEndpoints:
		return fmt.Errorf("%w: %d endpoints, want 1..%d", ErrOptions, len(o.Endpoints), messages.MaxEndpoints)
	case o.Interval < minInterval:
		return fmt.Errorf("%w: interval %v: want at least %v", ErrOptions, o.Interval, minInterval)
	case o.Timeout < 0 || o.PublishWait < 0 || o.MaxBytes < 0:
		return fmt.Errorf("%w: timeout %v, publish wait %v, max bytes %d: want none negative", ErrOptions, o.Timeout, o.PublishWait, o.MaxBytes)
	}
	for _, e := range o.Endpoints {
		if err := checkURL(e); err != nil {
			return err
		}
	}
	for _, m := range o.Metrics {
		if m == "" || len(m) > 128 || !metricName(m) {
			return fmt.Errorf("%w: metric %.80q is not a Prometheus metric name", ErrOptions, m)
		}
	}
	return nil
}

// checkURL refuses an endpoint that is not an absolute http(s) URL.
func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: endpoint %q: want an http:// or https:// URL such as http://127.0.0.1:9100/metrics",
			ErrOptions, redactURL(s))
	}
	return nil
}

// redactURL hides an endpoint's password, for logs and results.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(an endpoint URL that does not parse)"
	}
	return u.Redacted()
}

// metricName reports whether s is a Prometheus metric name.
func metricName(s string) bool {
	for i, r := range s {
		ok := r == '_' || r == ':' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || (i > 0 && '0' <= r && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}

// defaultID is the host name, made a valid id.
func defaultID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		return "observer"
	}
	b := []byte(host)
	for i, ch := range b {
		if !(ch == '-' || ch == '_' || ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z') {
			b[i] = '-'
		}
	}
	return string(b[:min(len(b), 64)])
}

func orDefault(s string, def func() string) string {
	if s == "" {
		return def()
	}
	return s
}

func orDuration(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
