package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/imapload/imapload/internal/testkit"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string // start, run, output, pass, fail, skip, build-output, …
	Package    string
	ImportPath string // build events
	Test       string
	Output     string
}

// testKey names one test of one package.
type testKey struct{ pkg, test string }

// report streams go test's output as go test would print it and keeps
// what the summary needs: the tests skipped and failed, with their output.
type report struct {
	w       io.Writer
	verbose bool // print every line, as go test -v

	top     map[testKey][]string // a running top-level test's output, subtests' included
	own     map[testKey][]string // a running test's own output
	present map[string]int       // by suite name: tests that ran with it there (testkit.Require's mark)
	skipped []result             // in the order they ended
	failed  []result
	pkgFail []string // packages that failed
}

// result is a test that ended skipped or failed, with its own output.
type result struct {
	testKey
	output []string
}

func newReport(w io.Writer, verbose bool) *report {
	return &report{w: w, verbose: verbose, top: map[testKey][]string{}, own: map[testKey][]string{}, present: map[string]int{}}
}

// read handles every event of r until it ends.
func (rp *report) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(rp.w, sc.Text()) // not an event: as it came
			continue
		}
		rp.handle(e)
	}
	return sc.Err()
}

// handle prints or keeps one event.
func (rp *report) handle(e event) {
	switch {
	case e.Action == "build-output":
		fmt.Fprint(rp.w, e.Output)
	case e.Test == "":
		rp.packageEvent(e)
	case e.Action == "output":
		rp.output(e)
	case e.Action == "pass" || e.Action == "skip" || e.Action == "fail":
		rp.end(e)
	}
}

// packageEvent prints a package's own lines (ok, FAIL, a panic) but the
// test binary's "PASS", which go test does not show.
func (rp *report) packageEvent(e event) {
	switch {
	case e.Action == "fail":
		rp.pkgFail = append(rp.pkgFail, e.Package)
		rp.flushPackage(e.Package)
	case e.Action == "output" && (rp.verbose || e.Output != "PASS\n"):
		fmt.Fprint(rp.w, e.Output)
	}
}

// output keeps (or, verbose, prints) a line of a test's output.
func (rp *report) output(e event) {
	if rp.verbose {
		fmt.Fprint(rp.w, e.Output)
	}
	if strings.HasPrefix(e.Output, "=== ") { // RUN, PAUSE, CONT, NAME: markers of -v
		return
	}
	k := testKey{e.Package, e.Test}
	top := testKey{e.Package, topLevel(e.Test)}
	rp.own[k] = append(rp.own[k], e.Output)
	rp.top[top] = append(rp.top[top], e.Output)
}

// end records a test that ended; a failed top-level test's output is
// printed, as go test prints it.
func (rp *report) end(e event) {
	k := testKey{e.Package, e.Test}
	res := result{testKey: k, output: rp.own[k]}
	delete(rp.own, k)
	rp.countPresent(res.output)
	switch e.Action {
	case "skip":
		rp.skipped = append(rp.skipped, res)
	case "fail":
		rp.failed = append(rp.failed, res)
	}
	if topLevel(e.Test) != e.Test {
		return
	}
	if e.Action == "fail" && !rp.verbose {
		fmt.Fprint(rp.w, strings.Join(rp.top[k], ""))
	}
	delete(rp.top, k)
}

// flushPackage prints the output of the tests of pkg that never ended
// (the package crashed or timed out while they ran).
func (rp *report) flushPackage(pkg string) {
	for _, k := range slices.SortedFunc(maps.Keys(rp.top), func(a, b testKey) int { return strings.Compare(a.test, b.test) }) {
		if k.pkg != pkg {
			continue
		}
		if !rp.verbose {
			fmt.Fprint(rp.w, strings.Join(rp.top[k], ""))
		}
		rp.failed = append(rp.failed, result{testKey: k, output: rp.top[k]})
		delete(rp.top, k)
	}
}

// countPresent counts the suites a test's output says were there.
func (rp *report) countPresent(output []string) {
	out := strings.Join(output, "")
	for _, s := range testkit.Suites {
		if strings.Contains(out, s.Name+testkit.PresentMark) {
			rp.present[s.Name]++
		}
	}
}

// topLevel is the top-level test of test ("TestX" of "TestX/sub").
func topLevel(test string) string {
	name, _, _ := strings.Cut(test, "/")
	return name
}
