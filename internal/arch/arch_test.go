package arch

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/imapload/imapload/"

// deps lists the non-test packages pkg depends on, directly or not.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", module+pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	return strings.Fields(string(out))
}

func TestDependencyRules(t *testing.T) {
	tests := []struct {
		pkg       string
		forbidden []string
	}{
		{"messages", []string{module, "github.com/nats-io/"}},
		{"recorder", []string{module + "producer", module + "aggregator", module + "reporter", module + "embedded", "github.com/nats-io/"}},
		{"bus", []string{module + "producer", module + "aggregator", module + "reporter", module + "embedded"}},
		{"producer", []string{module + "aggregator", module + "reporter", module + "embedded"}},
		{"aggregator", []string{module + "producer", module + "reporter", module + "embedded"}},
		{"reporter", []string{module + "producer", module + "aggregator", module + "embedded"}},
		{"verdict", []string{module + "producer", module + "aggregator", module + "reporter", module + "embedded", module + "bus", "github.com/nats-io/"}},
	}
	for _, tt := range tests {
		t.Run(tt.pkg, func(t *testing.T) {
			for _, d := range deps(t, tt.pkg) {
				if d == module+tt.pkg {
					continue
				}
				for _, f := range tt.forbidden {
					if strings.HasPrefix(d, f) {
						t.Errorf("%s depends on %s (forbidden: %s…)", tt.pkg, d, f)
					}
				}
			}
		})
	}
}

// TestReleaseBinaryLinksNoTesting keeps package testing (and with it the
// test helpers, which import it) out of the imapload binary.
func TestReleaseBinaryLinksNoTesting(t *testing.T) {
	for _, d := range deps(t, "cmd/imapload") {
		if d == "testing" {
			t.Errorf("cmd/imapload depends on testing; test helpers belong in _test.go files or internal/testkit")
		}
	}
}
