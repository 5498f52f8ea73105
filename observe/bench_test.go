package observe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"
)

// BenchmarkScrape is the cost of one scrape of an endpoint, as the
// observer pays it once a second: the HTTP GET on 127.0.0.1, parsing the
// page, and folding it into the endpoint's figures. The pages are real
// ones: node_exporter 1.5 (Debian 12, 2 CPUs, 77 KB) and Dovecot 2.3.19's
// OpenMetrics listener with deploy/dovecot's metrics (2 KB).
func BenchmarkScrape(b *testing.B) {
	for _, tc := range []struct{ name, file, ctype string }{
		{"node_exporter", "testdata/node_exporter.txt", "text/plain; version=0.0.4; charset=utf-8"},
		{"dovecot", "testdata/dovecot.txt", "application/openmetrics-text; version=0.0.1; charset=utf-8"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			page, err := os.ReadFile(tc.file)
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				_, _ = w.Write(page)
			}))
			defer srv.Close()
			o, err := (&Options{Endpoints: []string{srv.URL}}).normalized()
			if err != nil {
				b.Fatal(err)
			}
			s, e := newScraper(srv.URL, &o), newEndpoint(srv.URL)
			var buf []reading
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				fams, _, err := s.scrape(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				var means []meanRule
				buf, means = readings(fams, nil, buf[:0])
				e.add(t0.Add(time.Duration(i)*time.Second), buf, means)
			}
		})
	}
}

// BenchmarkFigures is the derivation at the end of a step: a window of 31
// node_exporter scrapes folded into figures.
func BenchmarkFigures(b *testing.B) {
	page, err := os.ReadFile("testdata/node_exporter.txt")
	if err != nil {
		b.Fatal(err)
	}
	fams, err := parseExposition(page, "")
	if err != nil {
		b.Fatal(err)
	}
	e := newEndpoint("http://127.0.0.1:9100/metrics")
	for i := range 31 {
		rs, means := readings(fams, nil, nil)
		e.add(t0.Add(time.Duration(i)*time.Second), rs, means)
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(e.figures().Figures) == 0 {
			b.Fatal("no figures")
		}
	}
}
