package observe

import "errors"

// Sentinel errors, checked with errors.Is. The messages that wrap them carry
// the detail (the option, the endpoint, the HTTP status) and never a
// password.
var (
	// ErrOptions reports Options that cannot run: no endpoint, a URL that
	// is not http(s), an invalid id, a negative or too short duration.
	ErrOptions = errors.New("observe: invalid options")
	// ErrNoConn reports New called without a NATS connection.
	ErrNoConn = errors.New("observe: no NATS connection")
	// ErrScrape reports a scrape that failed: refused, timed out, an HTTP
	// status other than 200, or a body larger than Options.MaxBytes. It is
	// the endpoint's failure, counted in its figures, never the observer's.
	ErrScrape = errors.New("observe: scrape failed")
	// ErrExposition reports exposition text that does not parse (neither
	// Prometheus text nor OpenMetrics): an error of that endpoint.
	ErrExposition = errors.New("observe: bad exposition text")
)
