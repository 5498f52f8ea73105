package observe

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
)

// FuzzParseExposition feeds anything to the parse path an endpoint's body
// takes, as Prometheus text and as OpenMetrics: it is an ErrExposition or
// it parses, and what it parses folds into figures a result may carry. A
// panic of our own code (the OpenMetrics rewrite, the derivations) fails
// it; expfmt's own panics are recovered as parse errors (textToFamilies),
// which testdata/fuzz keeps one input of.
func FuzzParseExposition(f *testing.F) {
	for _, path := range []string{"testdata/dovecot.txt", "testdata/node_exporter.txt"} {
		text, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(text[:min(len(text), 4096)], strings.HasSuffix(path, "dovecot.txt"))
	}
	for _, seed := range []string{
		dovecotText(1, 2), counterText(3), nodeText(1, 2, 3, 4, 5, 6, 7, 8, 9, 10),
		"# TYPE a counter\na_total{l=\"}\"} 1 2 # {x=\"y\"} 3\n# EOF\n", "# TYPE h histogram\nh_bucket{le=\"1\"} NaN\n",
		"a{", "# TYPE", "x +Inf\n", "",
	} {
		f.Add([]byte(seed), strings.Contains(seed, "# EOF"))
	}
	f.Fuzz(func(t *testing.T, data []byte, openMetrics bool) {
		ctype := "text/plain; version=0.0.4"
		if openMetrics {
			ctype = openMetricsType
		}
		fams, err := parseExposition(data, ctype)
		if err != nil {
			if fams != nil || !errors.Is(err, ErrExposition) {
				t.Fatalf("parseExposition() = %v, %v; want nil, an ErrExposition", fams, err)
			}
			return
		}
		e := newEndpoint("http://127.0.0.1:9100/metrics")
		for i := range 2 {
			rs, means := readings(fams, []string{"a", "a_total", "h", "x"}, nil)
			e.add(t0.Add(time.Duration(i)*time.Second), rs, means)
		}
		figs := e.figures()
		msg := messages.ServerFigures{Kind: messages.KindServerFigures, Run: "r", Step: 1, Observer: "o",
			Final: true, Endpoints: []messages.EndpointFigures{figs}}
		if err := msg.Validate(); err != nil {
			t.Fatalf("the figures of a parsed page do not validate: %v", err)
		}
		if _, err := messages.DecodeServerFigures(encode(&msg)); err != nil {
			t.Fatalf("the figures of a parsed page do not decode: %v", err)
		}
	})
}
