package aggregator

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps the package's edges pointing inward: it meets the
// producer and the reporter only through messages on NATS, and never runs
// the embedded test servers.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list -deps: %v", err)
	}
	for _, forbidden := range []string{"/producer", "/reporter", "/embedded", "/cmd/"} {
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "github.com/imapload/imapload") && strings.Contains(dep+"/", forbidden) {
				t.Errorf("aggregator imports %s; it must not depend on %s", dep, strings.Trim(forbidden, "/"))
			}
		}
	}
}
