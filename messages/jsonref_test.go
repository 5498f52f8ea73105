package messages_test

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// updateJSONRef rewrites docs/reference/json.md from the field comments
// instead of comparing it.
var updateJSONRef = flag.Bool("update", false, "rewrite docs/reference/json.md from the field comments")

const (
	jsonRefPath = "../docs/reference/json.md"
	regenerate  = "go test ./cmd/imapload ./messages -run 'TestCLIReference|TestJSONReference' -update"
)

// jsonRoots are the messages that travel, in the order the reference gives
// them; the types they use follow, in the order they are first used.
var jsonRoots = []string{"StepCommand", "StepReply", "ProducerInfo", "StepResult", "RunReport", "SampleBatch", "ServerFigures"}

// TestJSONReference fails when docs/reference/json.md differs from what the
// documented structs of this package generate, or when a field of a wire
// type has no comment.
func TestJSONReference(t *testing.T) {
	ref := newJSONRef(t)
	got := ref.render()
	for _, f := range ref.undocumented {
		t.Errorf("%s has no comment: every field of the wire contract says what it is, with its unit", f)
	}
	if *updateJSONRef {
		if err := os.WriteFile(jsonRefPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(jsonRefPath)
	if err != nil {
		t.Fatalf("%v; regenerate: %s", err, regenerate)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what the field comments of package messages generate; regenerate: %s", jsonRefPath, regenerate)
	}
}

// jsonRef is the package's documentation, read from its source.
type jsonRef struct {
	fset         *token.FileSet
	pkg          *doc.Package
	types        map[string]*doc.Type
	undocumented []string
}

func newJSONRef(t *testing.T) *jsonRef {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/imapload/imapload/messages", doc.PreserveAST)
	if err != nil {
		t.Fatal(err)
	}
	r := &jsonRef{fset: fset, pkg: p, types: map[string]*doc.Type{}}
	for _, ty := range p.Types {
		r.types[ty.Name] = ty
	}
	return r
}

// render writes the reference: each root, then each type it uses.
func (r *jsonRef) render() []byte {
	var b bytes.Buffer
	b.WriteString("<!-- Generated from the field comments of package messages by TestJSONReference; do not edit.\n")
	b.WriteString("     Regenerate: " + regenerate + " -->\n")
	b.WriteString("# The wire contract: JSON and msgpack fields\n\n")
	b.WriteString("Every message imapload sends on NATS, field by field, from the comments of the structs in\n")
	b.WriteString("[messages/](../../messages) (each says its unit). Step commands, replies, results and reports are JSON;\n")
	b.WriteString("sample batches are msgpack. Latencies in results are milliseconds, rates commands per second, durations\n")
	b.WriteString("Go duration strings (`\"30s\"`), times RFC 3339 UTC. A field marked *omitted when empty* is left out\n")
	b.WriteString("of the message when it has its zero value.\n\n")
	seen := map[string]bool{}
	queue := slices.Clone(jsonRoots)
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if seen[name] || r.types[name] == nil {
			continue
		}
		seen[name] = true
		queue = append(queue, r.renderType(&b, r.types[name])...)
	}
	return b.Bytes()
}

// renderType writes one type's section and returns the types it uses.
func (r *jsonRef) renderType(b *bytes.Buffer, ty *doc.Type) []string {
	spec := ty.Decl.Specs[0].(*ast.TypeSpec)
	for _, s := range ty.Decl.Specs {
		if ts := s.(*ast.TypeSpec); ts.Name.Name == ty.Name {
			spec = ts
		}
	}
	fmt.Fprintf(b, "## %s\n\n%s\n", ty.Name, r.pkg.Markdown(ty.Doc))
	st, ok := spec.Type.(*ast.StructType)
	if !ok {
		var used []string
		text := r.typeText(spec.Type, &used)
		if !slices.ContainsFunc(ty.Methods, func(m *doc.Func) bool { return strings.HasPrefix(m.Name, "Marshal") || m.Name == "EncodeMsgpack" }) {
			fmt.Fprintf(b, "Encoded as %s.\n\n", text)
		}
		return used
	}
	var used []string
	b.WriteString("| field | type | meaning |\n|---|---|---|\n")
	for _, row := range r.rows(ty.Name, st) {
		fmt.Fprintf(b, "| %s | %s | %s |\n", strings.Join(row.names, ", "), r.typeText(row.typ, &used), row.doc)
	}
	b.WriteString("\n")
	return used
}

// row is one line of a type's table: fields that share a comment.
type row struct {
	names []string
	typ   ast.Expr
	doc   string
}

// rows lists the wire fields of st. A field without a comment of its own
// shares the one of the field on the line above it ("Run and Step identify
// the step"), and fields that share a comment and a type share a row.
func (r *jsonRef) rows(typeName string, st *ast.StructType) []row {
	var rows []row
	prevDoc, prevEnd := "", -1
	for _, f := range st.Fields.List {
		text := oneLine(f.Doc.Text())
		switch {
		case text != "":
			prevDoc = text
		case r.fset.Position(f.Pos()).Line == prevEnd+1:
			text = prevDoc // a line comment is its field's alone
		default:
			prevDoc = ""
		}
		if c := oneLine(f.Comment.Text()); c != "" {
			text = strings.TrimSpace(text + " " + c)
		}
		prevEnd = r.fset.Position(f.End()).Line
		for _, name := range r.wireNames(f) {
			if text == "" {
				r.undocumented = append(r.undocumented, typeName+"."+name)
			}
			if n := len(rows); n > 0 && rows[n-1].doc == text && text != "" && sameType(rows[n-1].typ, f.Type) {
				rows[n-1].names = append(rows[n-1].names, name)
				continue
			}
			rows = append(rows, row{names: []string{name}, typ: f.Type, doc: text})
		}
	}
	return rows
}

// wireNames are f's names on the wire: its json (or msgpack) tag's names,
// in backquotes; an embedded struct's fields are inline.
func (r *jsonRef) wireNames(f *ast.Field) []string {
	tag := ""
	if f.Tag != nil {
		tag, _ = strconv.Unquote(f.Tag.Value)
	}
	st := reflect.StructTag(tag)
	wire, ok := st.Lookup("json")
	if !ok {
		wire, ok = st.Lookup("msgpack")
	}
	if len(f.Names) == 0 {
		return []string{"(inline)"}
	}
	var names []string
	for _, n := range f.Names {
		if !n.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(wire, ",")
		if !ok || name == "" {
			name = n.Name
		}
		if name == "-" {
			continue
		}
		s := "`" + name + "`"
		if strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero") {
			s += " (omitted when empty)"
		}
		names = append(names, s)
	}
	return names
}

// typeText describes a field's type for a reader of the JSON, linking the
// package's own types (and adding them to used).
func (r *jsonRef) typeText(e ast.Expr, used *[]string) string {
	switch e := e.(type) {
	case *ast.Ident:
		if ty, ok := r.types[e.Name]; ok && ty != nil {
			*used = append(*used, e.Name)
			return "[" + e.Name + "](#" + strings.ToLower(e.Name) + ")"
		}
		return basicType(e.Name)
	case *ast.StarExpr:
		return r.typeText(e.X, used) + " or null"
	case *ast.ArrayType:
		if e.Len != nil {
			return fmt.Sprintf("array of %s %s", exprString(e.Len), r.typeText(e.Elt, used))
		}
		if id, ok := e.Elt.(*ast.Ident); ok && id.Name == "byte" {
			return "bytes"
		}
		return "array of " + r.typeText(e.Elt, used)
	case *ast.MapType:
		return "object: " + r.typeText(e.Value, used) + " by " + r.typeText(e.Key, used)
	case *ast.SelectorExpr:
		if exprString(e) == "time.Time" {
			return "time (RFC 3339)"
		}
		return "`" + exprString(e) + "`"
	}
	return "`" + exprString(e) + "`"
}

func basicType(name string) string {
	switch name {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "float64", "float32":
		return "number"
	}
	if strings.HasPrefix(name, "int") || strings.HasPrefix(name, "uint") {
		return "integer"
	}
	return "`" + name + "`"
}

func sameType(a, b ast.Expr) bool { return exprString(a) == exprString(b) }

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.BasicLit:
		return e.Value
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	case *ast.StarExpr:
		return "*" + exprString(e.X)
	case *ast.ArrayType:
		if e.Len != nil {
			return "[" + exprString(e.Len) + "]" + exprString(e.Elt)
		}
		return "[]" + exprString(e.Elt)
	case *ast.MapType:
		return "map[" + exprString(e.Key) + "]" + exprString(e.Value)
	}
	return fmt.Sprintf("%T", e)
}

// oneLine is a comment on one line, safe in a table cell.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}
