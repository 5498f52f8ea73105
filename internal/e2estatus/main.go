// Command e2estatus runs the tests and then says which end-to-end suites
// ran, which were skipped and why, and which tests failed, whatever the
// outcome. README's test command is
//
//	IMAPLOAD_LONG=1 go run ./internal/e2estatus -race ./...
//
// Its arguments are go test's: it runs `go test -json ARGS` with its own
// environment (so IMAPLOAD_LONG and IMAPLOAD_E2E reach the tests and its
// report alike), prints what `go test` would (package lines, the output of
// failed tests; everything with -v) as it comes, then the report, and
// exits with go test's status. A passing `go test` shows no skip; this
// report does.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
)

func main() {
	// Ctrl-C reaches go test too (the same process group): the report of
	// what ran so far still follows its end.
	signal.Ignore(os.Interrupt)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs go test with args, streams its output to stdout, writes the
// report and returns go test's exit status.
func run(args []string, stdout, stderr io.Writer) int {
	cmd := exec.Command("go", append([]string{"test", "-json"}, args...)...)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintln(stderr, "e2estatus: go test:", err)
		return 1
	}
	r := newReport(stdout, slices.Contains(args, "-v"))
	readErr := r.read(out)
	code := exitCode(cmd.Wait())
	if readErr != nil {
		fmt.Fprintln(stderr, "e2estatus: reading go test -json:", readErr)
		code = max(code, 1)
	}
	r.summary(stdout, code)
	return code
}

// exitCode is the exit status of a finished command.
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.ExitCode() > 0:
		return ee.ExitCode()
	}
	return 1
}
