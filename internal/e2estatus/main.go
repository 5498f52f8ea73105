// Command e2estatus names the end-to-end suites that `go test ./...` did
// not run (a passing package's skips are not shown) and how to enable each.
// README's test command runs it after the tests.
package main

import (
	"fmt"
	"strings"

	"github.com/imapload/imapload/internal/testkit"
)

func main() {
	var missing []testkit.Suite
	for _, s := range testkit.Suites {
		if _, ok := s.Find(); !ok {
			missing = append(missing, s)
		}
	}
	if len(missing) == 0 {
		names := make([]string, len(testkit.Suites))
		for i, s := range testkit.Suites {
			names[i] = s.Name
		}
		fmt.Printf("end-to-end suites: all ran (%s)\n", strings.Join(names, "; "))
		return
	}
	fmt.Println("end-to-end suites that did NOT run (skipped):")
	for _, s := range missing {
		fmt.Printf("  - %s: needs %s; %s\n", s.Name, s.Needs, s.Enable)
	}
	fmt.Println("IMAPLOAD_E2E=1 makes a missing one a failure; .ci/run installs and runs them all")
}
