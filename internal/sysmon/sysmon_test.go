package sysmon

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestWanted(t *testing.T) {
	tests := []struct {
		godebug string
		want    bool
	}{
		{"", true},
		{"gctrace=1", true},
		{"madvdontneed=1,gctrace=1", true},
		{"schedtrace=0", false},
		{"gctrace=1,schedtrace=1000", false},
		{" schedtrace=5", false},
		{"scheddetail=1", true},
	}
	for _, tt := range tests {
		if got := Wanted(tt.godebug); got != tt.want {
			t.Errorf("Wanted(%q) = %v, want %v", tt.godebug, got, tt.want)
		}
	}
}

func TestEnv(t *testing.T) {
	tests := []struct {
		in, want []string
	}{
		{[]string{"A=1"}, []string{"A=1", "GODEBUG=" + Setting}},
		{[]string{"GODEBUG=gctrace=1", "B=2"}, []string{"GODEBUG=gctrace=1," + Setting, "B=2"}},
		{[]string{"GODEBUG="}, []string{"GODEBUG=" + Setting}},
	}
	for _, tt := range tests {
		if got := Env(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Env(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestReexec runs this test binary as a child that calls Reexec: the child
// must come back as itself, same arguments, with Setting in GODEBUG, and
// without looping.
func TestReexec(t *testing.T) {
	if os.Getenv("SYSMON_TEST_CHILD") == "1" {
		if err := Reexec(); err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString("child GODEBUG=" + os.Getenv("GODEBUG") + " args=" + strings.Join(os.Args[1:], " ") + "\n")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestReexec$", "-test.v")
	cmd.Env = append(os.Environ(), "SYSMON_TEST_CHILD=1", "GODEBUG=gctrace=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	want := "child GODEBUG=gctrace=0," + Setting + " args=-test.run=^TestReexec$ -test.v"
	if !strings.Contains(string(out), want) {
		t.Fatalf("child output lacks %q:\n%s", want, out)
	}
	if strings.Count(string(out), "child GODEBUG") != 1 {
		t.Fatalf("child ran its body more than once:\n%s", out)
	}
}
