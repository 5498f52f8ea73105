package producer

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies enforces the dependency rule: the producer meets the
// aggregator and the reporter only through messages on NATS, and non-test
// code never imports the embedded servers.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	const mod = "github.com/imapload/imapload/"
	for _, forbidden := range []string{"embedded", "aggregator", "reporter", "cmd"} {
		for _, dep := range strings.Fields(string(out)) {
			if dep == mod+forbidden || strings.HasPrefix(dep, mod+forbidden+"/") {
				t.Errorf("producer depends on %s; it must not", dep)
			}
		}
	}
}
