package k8s

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// The binary is built once for the package's tests (about 10–20 s on a
// cold cache): the manifests are checked against its subcommands and flags,
// as `imapload <cmd> --help` lists them, so they cannot drift from the code.
var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	binDir    string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binary returns the path of the imapload binary of this tree.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "imapload-k8s-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "imapload")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/imapload/imapload/cmd/imapload").CombinedOutput()
		if err != nil {
			buildErr = &buildError{err, out}
		}
	})
	if buildErr != nil {
		t.Fatalf("building imapload: %v", buildErr)
	}
	return binPath
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + string(e.out) }

// run runs the binary with args and returns its standard output.
func run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(binary(t), args...).Output()
	if err != nil {
		t.Fatalf("imapload %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

var (
	helpMu    sync.Mutex
	helpCache = map[string]map[string]bool{}
	flagLine  = regexp.MustCompile(`(?m)^\s+(?:-[A-Za-z], )?--([a-z0-9][a-z0-9-]*)`)
	cmdLine   = regexp.MustCompile(`(?m)^  ([a-z][a-z0-9-]*)\s`)
)

// subcommands returns the names of the binary's subcommands.
func subcommands(t *testing.T) map[string]bool {
	t.Helper()
	help := run(t, "--help")
	_, list, ok := strings.Cut(help, "Available Commands:")
	if !ok {
		t.Fatalf("imapload --help lists no commands:\n%s", help)
	}
	list, _, _ = strings.Cut(list, "\n\n")
	cmds := map[string]bool{}
	for _, m := range cmdLine.FindAllStringSubmatch(list, -1) {
		cmds[m[1]] = true
	}
	return cmds
}

// flags returns the flags of subcommand cmd, its own and the global ones,
// as its --help lists them.
func flags(t *testing.T, cmd string) map[string]bool {
	t.Helper()
	helpMu.Lock()
	defer helpMu.Unlock()
	if fs, ok := helpCache[cmd]; ok {
		return fs
	}
	help := run(t, cmd, "--help")
	_, list, ok := strings.Cut(help, "Flags:")
	if !ok {
		t.Fatalf("imapload %s --help lists no flags:\n%s", cmd, help)
	}
	fs := map[string]bool{}
	for _, m := range flagLine.FindAllStringSubmatch(list, -1) {
		fs[m[1]] = true
	}
	helpCache[cmd] = fs
	return fs
}

// flagOfEnv is the flag an IMAPLOAD_* variable sets (the inverse of
// cmd/imapload's envName), "" for another variable.
func flagOfEnv(name string) string {
	rest, ok := strings.CutPrefix(name, "IMAPLOAD_")
	if !ok {
		return ""
	}
	return strings.ToLower(strings.ReplaceAll(rest, "_", "-"))
}
