package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/imapload/imapload/internal/testkit"
)

// events builds a go test -json stream: one line per "action|test|output".
func events(pkg string, lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		f := strings.SplitN(l, "|", 3)
		b.WriteString(`{"Action":"` + f[0] + `","Package":"` + pkg + `"`)
		if f[1] != "" {
			b.WriteString(`,"Test":"` + f[1] + `"`)
		}
		if len(f) > 2 {
			b.WriteString(`,"Output":` + quote(f[2]))
		}
		b.WriteString("}\n")
	}
	return b.String()
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestReport: the stream shows what go test would (package lines, a failed
// test's output, not a passing one's), and the summary names the suites
// that ran, were skipped and why, and the failures.
func TestReport(t *testing.T) {
	dovecot, long := testkit.Dovecot, testkit.Long
	in := events("github.com/imapload/imapload/p",
		"run|TestUses", "output|TestUses|=== RUN   TestUses\n", "output|TestUses|    x_test.go:1: "+dovecot.Name+testkit.PresentMark+"\n",
		"output|TestUses|--- PASS: TestUses (0.00s)\n", "pass|TestUses",
		"output|TestLong|    x_test.go:2: "+long.Name+": "+long.Needs+" is missing; …\n", "output|TestLong|--- SKIP: TestLong (0.00s)\n", "skip|TestLong",
		"output|TestOther|    x_test.go:3: needs a quiet machine\n", "skip|TestOther",
		"output|TestFail|=== RUN   TestFail\n", "output|TestFail/sub|    x_test.go:4: boom\n", "fail|TestFail/sub",
		"output|TestFail|--- FAIL: TestFail (0.00s)\n", "fail|TestFail",
		"output||PASS\n", "output||FAIL\tgithub.com/imapload/imapload/p\t0.1s\n", "fail|")
	in += events("github.com/imapload/imapload/q", "output|TestHang|    y_test.go:9: waiting\n", "output||panic: test timed out\n", "fail|")
	var out strings.Builder
	r := newReport(&out, false)
	if err := r.read(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	r.summary(&out, 1)
	got := out.String()
	for _, want := range []string{
		"    x_test.go:4: boom\n--- FAIL: TestFail (0.00s)\nFAIL\tgithub.com/imapload/imapload/p\t0.1s\n",
		"panic: test timed out\n    y_test.go:9: waiting\n",
		"ran      " + dovecot.Name + ": 1 test\n",
		"SKIPPED  " + long.Name + ": 1 test did not run: needs " + long.Needs + "; " + long.Enable + "\n",
		"other skipped tests: 1\n  p TestOther: needs a quiet machine\n",
		"failed: 2\n  p TestFail\n  q TestHang\n",
		"go test: exit 1\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"=== RUN", "PASS\n", "--- PASS", "TestUses (0.00s)"} {
		if strings.Contains(got, not) {
			t.Errorf("report shows %q, which go test would not:\n%s", not, got)
		}
	}
}

// TestRunReportsWhateverTheOutcome: go test's failure still gets the
// report, and its exit status is e2estatus's.
func TestRunReportsWhateverTheOutcome(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"-run", "^$", "."}, 0},
		{[]string{"./no-such-package"}, 1},
	} {
		var out, errOut strings.Builder
		code := run(tc.args, &out, &errOut)
		if code != tc.code || !strings.Contains(out.String(), "end-to-end suites:") || !strings.Contains(out.String(), "go test: exit ") {
			t.Errorf("run(%q) = %d, want %d and the report\nstdout:\n%s\nstderr:\n%s", tc.args, code, tc.code, out.String(), errOut.String())
		}
	}
}

// TestFailedWithSuitePresent: a test that failed with its suite present
// (Dovecot there, the test's own check failed) is not reported as failing
// for lack of the suite (CI printed "failed for lack of it … needs
// IMAPLOAD_DOVECOT_ADDR" beside a Dovecot that was running); one that
// failed without it still is.
func TestFailedWithSuitePresent(t *testing.T) {
	dovecot, long := testkit.Dovecot, testkit.Long
	in := events("github.com/imapload/imapload/p",
		"output|TestHeld|    x_test.go:1: "+dovecot.Name+testkit.PresentMark+"\n", "output|TestHeld|    x_test.go:2: held 1782\n", "fail|TestHeld",
		"output|TestLong|    x_test.go:3: "+long.Name+": "+long.Needs+" is missing; …\n", "fail|TestLong",
		"output||FAIL\tgithub.com/imapload/imapload/p\t0.1s\n", "fail|")
	var out strings.Builder
	r := newReport(&out, true)
	if err := r.read(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	r.summary(&out, 1)
	got := out.String()
	if strings.Contains(got, "FAILED   "+dovecot.Name) {
		t.Errorf("the Dovecot suite was present, yet reported as missing:\n%s", got)
	}
	for _, want := range []string{
		"ran      " + dovecot.Name + ": 1 test (1 test failed with it present: see the failures below)\n",
		"FAILED   " + long.Name + ": 1 test failed for lack of it",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
}
