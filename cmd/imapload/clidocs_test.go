package main

import (
	"bytes"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// update rewrites the generated documentation (docs/reference/cli) from the
// code instead of comparing it.
var update = flag.Bool("update", false, "rewrite docs/reference/cli from the cobra tree")

// cliDocDir is where the CLI reference lives, from this package.
const cliDocDir = "../../docs/reference/cli"

// regenerate is the command that rewrites every generated reference page.
const regenerate = "go test ./cmd/imapload ./messages -run 'TestCLIReference|TestJSONReference' -update"

// machineDefaults are the flags whose default depends on the machine that
// builds the tree, by command path and flag: the reference says what the
// default is instead of one machine's figure.
var machineDefaults = map[string]map[string]string{
	"imapload run": {"producers": "one per core"},
}

// cliReference renders the reference page of every command of root, by file
// name, as cobra/doc writes them (no date line, so the output is the same
// on every day and machine).
func cliReference(t *testing.T, root *cobra.Command) map[string][]byte {
	t.Helper()
	pages := map[string][]byte{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		for name, def := range machineDefaults[c.CommandPath()] {
			f := c.Flags().Lookup(name)
			if f == nil {
				t.Fatalf("machineDefaults: %s has no flag --%s", c.CommandPath(), name)
			}
			f.DefValue = def
		}
		if !c.IsAvailableCommand() && c != root {
			return
		}
		var b bytes.Buffer
		if err := doc.GenMarkdownCustom(c, &b, func(s string) string { return s }); err != nil {
			t.Fatalf("GenMarkdown(%s): %v", c.CommandPath(), err)
		}
		pages[strings.ReplaceAll(c.CommandPath(), " ", "_")+".md"] = b.Bytes()
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return pages
}

// TestCLIReference fails when docs/reference/cli differs from what the
// cobra tree generates: a flag, a default or a help text changed without
// its page.
func TestCLIReference(t *testing.T) {
	pages := cliReference(t, newRoot())
	if *update {
		writePages(t, cliDocDir, pages)
		return
	}
	comparePages(t, cliDocDir, pages)
}

// writePages replaces the generated pages of dir (every .md) with pages.
func writePages(t *testing.T, dir string, pages map[string][]byte) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	for name, b := range pages {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// comparePages fails for every page of dir that differs from pages, is
// missing or is no longer generated, naming the command that regenerates.
func comparePages(t *testing.T, dir string, pages map[string][]byte) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(pages)) {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s/%s: %v; regenerate: %s", dir, name, err, regenerate)
			continue
		}
		if !bytes.Equal(got, pages[name]) {
			t.Errorf("%s/%s differs from what the code generates (first difference at line %d); regenerate: %s",
				dir, name, firstDiffLine(got, pages[name]), regenerate)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	for _, f := range files {
		if _, ok := pages[filepath.Base(f)]; !ok {
			t.Errorf("%s is no command's page any more; regenerate: %s", f, regenerate)
		}
	}
}

// firstDiffLine is the 1-based line where a and b first differ.
func firstDiffLine(a, b []byte) int {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}
