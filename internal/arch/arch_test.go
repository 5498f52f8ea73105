// Package arch holds the dependency rules of the module, tested for every
// package at once: the layering of ARCHITECTURE.md ("Each package's room"), as data.
package arch

import (
	"bytes"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/imapload/imapload/"

// rule says what a package may depend on, directly or not (its non-test code).
type rule struct {
	uses      []string // packages of ours, relative to the module
	nats      bool     // the NATS client or server, github.com/nats-io/...
	testing   bool     // package testing: test helpers only, never the binary
	importers []string // when set, the only packages that may import it directly
}

var (
	wire    = []string{"messages", "messages/internal/wire"} // the contract and the codec under it
	cores   = append([]string{"verdict", "recorder", "bus"}, wire...)
	control = append([]string{"verdict", "bus"}, wire...)
	roles   = []string{"producer", "aggregator", "reporter", "ramp", "progress", "observe"}
)

// rules is the layering of ARCHITECTURE.md's table, bottom up; every package
// of the module needs a rule.
var rules = map[string]rule{
	// The wire contract and the leaves import nothing of ours but the
	// contract's own codec, which only the contract imports.
	"messages/internal/wire": {importers: []string{"messages"}},
	"messages":               {uses: []string{"messages/internal/wire"}},
	// The in-process servers: only the binary, the pipeline and natstest import them.
	"embedded": {nats: true, importers: []string{"cmd/imapload", "pipeline", "internal/testkit/natstest"}},
	// On top of messages: the pure cores and the NATS plumbing.
	"recorder": {uses: wire},
	"verdict":  {uses: wire},
	"bus":      {uses: wire, nats: true},
	// The health endpoint sees batches and results handed to it, no NATS.
	"health":           {uses: wire},
	"internal/opguard": {},                                                       // a timeout that closes a connection
	"internal/mailgen": {},                                                       // realistic mail: sizes, headers, bodies (seed's, the deliveries')
	"seed":             {uses: []string{"internal/opguard", "internal/mailgen"}}, // fills IMAP accounts with mail; IMAP (and LMTP for INBOX)
	"preflight":        {uses: []string{"internal/opguard"}},                     // one connection and login before any load; IMAP only
	// The roles and the controls meet only on NATS subjects: none imports
	// another, nor the embedded servers.
	"producer":   {uses: slices.Concat(cores, []string{"internal/opguard", "internal/mailgen"}), nats: true},
	"aggregator": {uses: cores, nats: true},
	"reporter":   {uses: cores, nats: true},
	"ramp":       {uses: control, nats: true},
	// The observer scrapes the server's metrics over HTTP beside the
	// other roles, and meets them only on NATS subjects too.
	"observe":  {uses: cores, nats: true},
	"progress": {uses: control, nats: true},
	// The whole pipeline in one process (run, demo): NATS, the roles and the
	// ramp wired as separate processes would be; only the binary imports it.
	"pipeline": {uses: slices.Concat(cores, roles, []string{"embedded", "internal/opguard", "internal/mailgen"}), nats: true, importers: []string{"cmd/imapload"}},
	// The binary wires everything together, and links no test code.
	"cmd/imapload": {uses: slices.Concat(cores, roles, []string{"pipeline", "embedded", "health", "seed", "preflight", "internal/opguard", "internal/mailgen"}), nats: true},
	// Test support, imported by _test.go files only (and the e2estatus tool).
	"internal/testkit":          {testing: true},
	"internal/testkit/natstest": {uses: []string{"embedded"}, nats: true, testing: true},
	"internal/e2estatus":        {uses: []string{"internal/testkit"}, testing: true},
	"internal/arch":             {},
	// The Kubernetes manifests: a package for their validation test only.
	"deploy/k8s": {},
	// The fleet benchmark: its code is all in _test.go files, which drive
	// the aggregator, the recorder and bus over the embedded NATS.
	"internal/fleetbench": {},
	// The cluster tests: their code is all in _test.go files, which run the
	// producers and the aggregator over three embedded NATS nodes.
	"internal/clustertest": {testing: true},
}

// listDeps maps every package of the module (relative to it) to the packages
// its non-test code depends on, directly or not. It fails t if go list does.
func listDeps(t *testing.T) map[string][]string {
	t.Helper()
	return goList(t, "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}")
}

// listImports maps every package of the module (relative to it) to the
// packages its non-test code imports directly.
func listImports(t *testing.T) map[string][]string {
	t.Helper()
	return goList(t, "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}")
}

// goList maps the first field of each line go list -f format prints for
// every package of the module to the rest. It fails t if go list does.
func goList(t *testing.T, format string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", format, module+"...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s...: %v\n%s", module, err, stderr.Bytes())
	}
	pkgs := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		pkgs[strings.TrimPrefix(fields[0], module)] = fields[1:]
	}
	if len(pkgs) == 0 {
		t.Fatalf("go list %s... listed no package", module)
	}
	return pkgs
}

// TestDependencyRules checks every package against its rule, and that every
// rule names a package.
func TestDependencyRules(t *testing.T) {
	pkgs := listDeps(t)
	for _, pkg := range slices.Sorted(maps.Keys(pkgs)) {
		t.Run(pkg, func(t *testing.T) {
			r, ok := rules[pkg]
			if !ok {
				t.Fatalf("%s has no rule: add it to rules in internal/arch, in its layer", pkg)
			}
			for _, d := range pkgs[pkg] {
				if err := r.check(d); err != "" {
					t.Errorf("%s depends on %s; %s", pkg, d, err)
				}
			}
		})
	}
	for pkg := range rules {
		if _, ok := pkgs[pkg]; !ok {
			t.Errorf("rules name %s, which go list does not list: remove or rename the rule", pkg)
		}
	}
	for pkg, imports := range listImports(t) {
		for _, d := range imports {
			r := rules[strings.TrimPrefix(d, module)]
			if strings.HasPrefix(d, module) && r.importers != nil && !slices.Contains(r.importers, pkg) {
				t.Errorf("%s imports %s, which only %s may import", pkg, d, strings.Join(r.importers, ", "))
			}
		}
	}
}

// check says why r forbids a dependency on d, or "" if it allows it.
func (r rule) check(d string) string {
	switch {
	case strings.HasPrefix(d, module) && !slices.Contains(r.uses, strings.TrimPrefix(d, module)):
		if len(r.uses) == 0 {
			return "its rule allows no package of ours"
		}
		return "its rule allows only " + strings.Join(r.uses, ", ") + " of ours"
	case strings.HasPrefix(d, "github.com/nats-io/") && !r.nats:
		return "its rule allows no NATS"
	case d == "testing" && !r.testing:
		return "only test helpers may link package testing (they belong in _test.go files or internal/testkit)"
	}
	return ""
}
