package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/imapload/imapload/internal/testkit"
)

// Bounds of the lists the summary prints.
const (
	maxOtherSkips = 10
	maxFailures   = 30
)

// module is the prefix left off package names in the summary.
const module = "github.com/imapload/imapload/"

// summary writes, after go test's output: each end-to-end suite (ran,
// skipped and why, failed for lack of it, or not needed here), the other
// skipped tests, the failures, and go test's status.
func (rp *report) summary(w io.Writer, code int) {
	skipped, otherSkips := bySuite(rp.skipped)
	lacking, withIt := splitPresent(rp.failed)
	failedFor, _ := bySuite(lacking)
	failedWith, _ := bySuite(withIt)
	fmt.Fprintln(w, "\nend-to-end suites:")
	for _, s := range testkit.Suites {
		line := suiteLine(s, rp.present[s.Name], skipped[s.Name], failedFor[s.Name])
		if n := len(failedWith[s.Name]); n > 0 && len(failedFor[s.Name]) == 0 {
			line += fmt.Sprintf(" (%s failed with it present: see the failures below)", tests(n))
		}
		fmt.Fprintln(w, "  "+line)
	}
	if len(skipped) > 0 {
		fmt.Fprintln(w, "  IMAPLOAD_E2E=1 makes a missing suite a failure; .ci/run installs and runs them all")
	}
	listSkips(w, otherSkips)
	rp.listFailures(w)
	fmt.Fprintf(w, "go test: exit %d\n", code)
}

// bySuite splits results into those whose output names a suite (as
// testkit.Require's message does), by suite name, and the others.
func bySuite(rs []result) (map[string][]result, []result) {
	named, others := map[string][]result{}, []result(nil)
	for _, r := range rs {
		out := strings.Join(r.output, "")
		i := slices.IndexFunc(testkit.Suites, func(s testkit.Suite) bool { return strings.Contains(out, s.Name+": ") })
		if i < 0 {
			others = append(others, r)
			continue
		}
		named[testkit.Suites[i].Name] = append(named[testkit.Suites[i].Name], r)
	}
	return named, others
}

// splitPresent splits failed tests into those that failed for lack of a
// suite and those that failed with every suite they asked for present
// (testkit.Require logs "NAME: present"): the latter failed on their own
// account, and the summary must not blame a missing suite.
func splitPresent(rs []result) (lacking, present []result) {
	for _, r := range rs {
		if strings.Contains(strings.Join(r.output, ""), testkit.PresentMark) {
			present = append(present, r)
		} else {
			lacking = append(lacking, r)
		}
	}
	return lacking, present
}

// suiteLine says what became of suite s in this run: present in how many
// tests, and how many were skipped or failed without it.
func suiteLine(s testkit.Suite, present int, skipped, failed []result) string {
	switch {
	case len(failed) > 0:
		return fmt.Sprintf("FAILED   %s: %s failed for lack of it (IMAPLOAD_E2E=1): needs %s; %s", s.Name, tests(len(failed)), s.Needs, s.Enable)
	case len(skipped) > 0:
		return fmt.Sprintf("SKIPPED  %s: %s did not run: needs %s; %s", s.Name, tests(len(skipped)), s.Needs, s.Enable)
	case present > 0:
		return fmt.Sprintf("ran      %s: %s", s.Name, tests(present))
	}
	return fmt.Sprintf("unused   %s: no test run here needed it", s.Name)
}

// tests counts tests in words.
func tests(n int) string {
	if n == 1 {
		return "1 test"
	}
	return fmt.Sprintf("%d tests", n)
}

// listSkips names the skipped tests that no suite explains, with why.
func listSkips(w io.Writer, rs []result) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintf(w, "other skipped tests: %d\n", len(rs))
	for _, r := range rs[:min(len(rs), maxOtherSkips)] {
		fmt.Fprintf(w, "  %s %s: %s\n", strings.TrimPrefix(r.pkg, module), r.test, reason(r.output))
	}
	if len(rs) > maxOtherSkips {
		fmt.Fprintf(w, "  … and %d more (go test -v shows them)\n", len(rs)-maxOtherSkips)
	}
}

// listFailures names the failed tests, then the packages that failed
// without a failed test (a build error, a crash, a timeout).
func (rp *report) listFailures(w io.Writer) {
	var lines []string
	for _, r := range rp.failed {
		if topLevel(r.test) == r.test {
			lines = append(lines, strings.TrimPrefix(r.pkg, module)+" "+r.test)
		}
	}
	for _, pkg := range rp.pkgFail {
		if !slices.ContainsFunc(rp.failed, func(r result) bool { return r.pkg == pkg }) {
			lines = append(lines, strings.TrimPrefix(pkg, module)+": the package failed (a build error, a crash or a timeout: see above)")
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "failed: %d\n", len(lines))
	for _, l := range lines[:min(len(lines), maxFailures)] {
		fmt.Fprintln(w, "  "+l)
	}
	if len(lines) > maxFailures {
		fmt.Fprintf(w, "  … and %d more (above)\n", len(lines)-maxFailures)
	}
}

// reason is the first line a skipped test printed, without its file:line.
func reason(output []string) string {
	for _, l := range output {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		if _, msg, ok := strings.Cut(l, ": "); ok && strings.Contains(l[:len(l)-len(msg)], ".go:") {
			return msg
		}
		return l
	}
	return "(no reason given)"
}
