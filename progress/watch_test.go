package progress

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFit(t *testing.T) {
	tests := []struct {
		name, line string
		n          int
		want       string
	}{
		{name: "fits", line: "step 1  target 300/s", n: 20, want: "step 1  target 300/s"},
		{name: "cut, marked", line: "step 1  target 300/s", n: 10, want: "step 1  t…"},
		{name: "runes, not bytes", line: "login: NO ××× ≥≥≥", n: 12, want: "login: NO ×…"},
		{name: "no width", line: "whole", n: 0, want: "whole"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fit(tt.line, tt.n)
			if got != tt.want || !utf8.ValidString(got) {
				t.Errorf("fit(%q, %d) = %q, want %q", tt.line, tt.n, got, tt.want)
			}
			if tt.n > 0 && utf8.RuneCountInString(got) > tt.n {
				t.Errorf("fit(%q, %d) = %q, wider than %d", tt.line, tt.n, got, tt.n)
			}
		})
	}
}

// TestWidthNotATerminal: a writer that is no terminal gets the default
// width, less the column kept free.
func TestWidthNotATerminal(t *testing.T) {
	if got := width(&strings.Builder{}); got != defaultWidth-1 {
		t.Errorf("width(not a terminal) = %d, want %d", got, defaultWidth-1)
	}
}
