package reporter

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the dependency rule: the reporter meets the producer and
// the aggregator only through messages on NATS, and non-test code never
// imports the embedded servers.
func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []string{"/producer", "/aggregator", "/embedded", "/cmd"}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if strings.HasPrefix(path, "github.com/imapload/imapload"+bad) {
					t.Errorf("%s imports %s: the reporter must not depend on it", name, path)
				}
			}
		}
	}
}
