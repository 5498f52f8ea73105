package observe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// acceptHeader asks for the Prometheus text format first, which expfmt
// parses as it is, and takes OpenMetrics (Dovecot's only format).
const acceptHeader = "text/plain;version=0.0.4;q=1,application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1"

// scraper fetches one endpoint. Its url may hold a password; shown is
// the url as logs and results show it.
type scraper struct {
	url, shown string
	client     *http.Client
	timeout    time.Duration
	maxBytes   int64
}

func newScraper(endpoint string, o *Options) *scraper {
	return &scraper{url: endpoint, shown: redactURL(endpoint), client: o.Client, timeout: o.Timeout, maxBytes: o.MaxBytes}
}

// scrape fetches and parses the endpoint once. at is when the response
// arrived: the endpoint collects its values as it answers. Every failure
// wraps ErrScrape or ErrExposition.
func (s *scraper) scrape(ctx context.Context) (fams map[string]*dto.MetricFamily, at time.Time, err error) {
	body, ctype, at, err := s.fetch(ctx)
	if err != nil {
		return nil, at, err
	}
	fams, err = parseExposition(body, ctype)
	return fams, at, err
}

func (s *scraper) fetch(ctx context.Context) ([]byte, string, time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, "", time.Time{}, fmt.Errorf("%w: %s", ErrScrape, s.shown)
	}
	req.Header.Set("Accept", acceptHeader)
	resp, err := s.client.Do(req)
	at := time.Now()
	if err != nil {
		return nil, "", at, fmt.Errorf("%w: %s", ErrScrape, s.cause(ctx, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10)) // lets the connection be reused
		return nil, "", at, fmt.Errorf("%w: HTTP %s", ErrScrape, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, s.maxBytes+1))
	switch {
	case err != nil:
		return nil, "", at, fmt.Errorf("%w: reading the body: %s", ErrScrape, s.cause(ctx, err))
	case int64(len(body)) > s.maxBytes:
		return nil, "", at, fmt.Errorf("%w: a body of more than %d bytes", ErrScrape, s.maxBytes)
	}
	return body, resp.Header.Get("Content-Type"), at, nil
}

// cause says why a request failed, without the URL (it may hold a
// password; the endpoint's figures name it already).
func (s *scraper) cause(ctx context.Context, err error) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf("no answer within %v", s.timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}
