package observe

import (
	"bytes"
	"fmt"
	"mime"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// parseExposition reads a scrape's body, Prometheus text (0.0.4) or
// OpenMetrics 1.0 (Dovecot's listener serves only that), into its metric
// families. expfmt parses the text format; OpenMetrics is first rewritten
// into it (fromOpenMetrics). Text that does not parse is an error wrapping
// ErrExposition: bad input from an endpoint is that endpoint's failure,
// never the observer's.
func parseExposition(body []byte, contentType string) (map[string]*dto.MetricFamily, error) {
	if isOpenMetrics(contentType, body) {
		body = fromOpenMetrics(body)
	}
	fams, err := textToFamilies(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrExposition, clip(err.Error(), 300))
	}
	return fams, nil
}

// textToFamilies runs expfmt's text parser, which panics on some input
// (a sample line "{}", with labels and no name, in prometheus/common
// v0.66.1): the panic is turned into the parse error it should have been.
func textToFamilies(body []byte) (fams map[string]*dto.MetricFamily, err error) {
	defer func() {
		if r := recover(); r != nil {
			fams, err = nil, fmt.Errorf("the text format parser failed (%v)", r)
		}
	}()
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(bytes.NewReader(body))
}

// openMetricsType is OpenMetrics' media type.
const openMetricsType = "application/openmetrics-text"

// isOpenMetrics reports whether a body is OpenMetrics: by its media type,
// or, without one, by the "# EOF" line OpenMetrics ends with.
func isOpenMetrics(contentType string, body []byte) bool {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil {
		return mt == openMetricsType
	}
	end := bytes.TrimRight(body, "\n")
	return bytes.HasSuffix(end, []byte("\n# EOF")) || bytes.Equal(end, []byte("# EOF"))
}

// fromOpenMetrics rewrites OpenMetrics into the text format, line by line:
// "# EOF", "# UNIT" and "# HELP" go; a counter's TYPE names the _total
// series its samples carry; the types the text format lacks (info,
// stateset, unknown, gaugehistogram) go, leaving their samples untyped;
// exemplars and timestamps (seconds in OpenMetrics, milliseconds in the
// text format) are dropped from samples, whose time is the scrape's.
func fromOpenMetrics(body []byte) []byte {
	out := make([]byte, 0, len(body))
	for line := range bytes.Lines(body) {
		out = appendOpenMetrics(out, bytes.TrimRight(line, "\r\n"))
	}
	return out
}

// appendOpenMetrics appends one OpenMetrics line to out, rewritten.
func appendOpenMetrics(out, line []byte) []byte {
	switch {
	case len(bytes.TrimSpace(line)) == 0:
		return out
	case bytes.HasPrefix(line, []byte("# TYPE ")):
		return appendType(out, line)
	case line[0] == '#':
		return out // EOF, UNIT, HELP and comments: nothing the figures need
	}
	end := sampleNameEnd(line)
	if end < 0 || len(bytes.Fields(line[end:])) == 0 {
		return append(append(out, line...), '\n') // let the parser say what is wrong
	}
	out = append(append(out, line[:end]...), ' ')
	return append(append(out, bytes.Fields(line[end:])[0]...), '\n')
}

// appendType appends a TYPE line rewritten for the text format, or nothing.
func appendType(out, line []byte) []byte {
	f := bytes.Fields(line)
	if len(f) != 4 {
		return append(append(out, line...), '\n')
	}
	name, typ := f[2], string(f[3])
	switch typ {
	case "counter":
		out = append(append(out, "# TYPE "...), name...)
		if !bytes.HasSuffix(name, []byte("_total")) {
			out = append(out, "_total"...)
		}
		return append(out, " counter\n"...)
	case "gauge", "histogram", "summary":
		return append(append(out, line...), '\n')
	}
	return out
}

// sampleNameEnd is the index just past a sample's name and labels, -1 when
// its labels do not close.
func sampleNameEnd(line []byte) int {
	i := bytes.IndexAny(line, "{ \t")
	if i < 0 || line[i] != '{' {
		return i
	}
	quoted := false
	for j := i + 1; j < len(line); j++ {
		switch c := line[j]; {
		case quoted && c == '\\':
			j++
		case c == '"':
			quoted = !quoted
		case !quoted && c == '}':
			return j + 1
		}
	}
	return -1
}
