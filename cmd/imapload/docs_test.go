package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

// repoRoot is the repository, from this package.
const repoRoot = "../.."

// taskInstall is how the docs say to install Task, pinned: a fresh machine
// has none.
const taskInstall = "go install github.com/go-task/task/v3/cmd/task@v"

// commandDocs are the documents whose shell blocks must name only
// subcommands, flags and tasks that exist: README.md, docs/ (but the pages
// generated from the code) and the READMEs under deploy/.
func commandDocs(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, f := range markdownFiles(t) {
		if !strings.HasPrefix(f, "docs/reference/cli/") && (f == "README.md" || strings.HasPrefix(f, "docs/") || strings.HasPrefix(f, "deploy/")) {
			files = append(files, f)
		}
	}
	return files
}

// markdownFiles lists every .md file of the repository, relative to it.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(repoRoot, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != repoRoot || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(repoRoot, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestDocsCommands reads every shell block of the docs and fails on an
// imapload subcommand or flag that does not exist (or a flag value its type
// refuses), on a `task X` that Taskfile.yml lacks, and on a document that
// runs task without saying how to install it.
func TestDocsCommands(t *testing.T) {
	tasks := taskNames(t)
	for _, file := range commandDocs(t) {
		b, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		usesTask := false
		for _, cmd := range shellCommands(string(b)) {
			if err := checkImapload(cmd.words); err != nil {
				t.Errorf("%s:%d: %s: %v", file, cmd.line, strings.Join(cmd.words, " "), err)
			}
			if name, ok := taskOf(cmd.words); ok {
				usesTask = true
				if !slices.Contains(tasks, name) {
					t.Errorf("%s:%d: task %s: Taskfile.yml has no such task (it has %s)", file, cmd.line, name, strings.Join(tasks, ", "))
				}
			}
		}
		if usesTask && !strings.Contains(string(b), taskInstall) {
			t.Errorf("%s runs task but does not say how to install it: %s<version>", file, taskInstall)
		}
	}
}

// taskNames are the tasks of Taskfile.yml.
func taskNames(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "Taskfile.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var tf struct {
		Tasks map[string]any `json:"tasks"`
	}
	if err := yaml.Unmarshal(b, &tf); err != nil {
		t.Fatalf("Taskfile.yml: %v", err)
	}
	var names []string
	for n := range tf.Tasks {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// shellCommand is one simple command of a shell block.
type shellCommand struct {
	line  int      // line of the document it starts on
	words []string // its words, quotes removed, assignments before it dropped
}

// shellCommands returns the simple commands of every fenced block tagged
// sh, bash, shell or console (there, only the lines after a "$ " prompt).
func shellCommands(md string) []shellCommand {
	var cmds []shellCommand
	lines := strings.Split(md, "\n")
	lang, inBlock := "", false
	for i := 0; i < len(lines); i++ {
		fence := strings.TrimSpace(lines[i])
		if strings.HasPrefix(fence, "```") {
			inBlock, lang = !inBlock, strings.TrimPrefix(fence, "```")
			continue
		}
		if !inBlock || !slices.Contains([]string{"sh", "bash", "shell", "console"}, lang) {
			continue
		}
		text, start := lines[i], i+1
		if lang == "console" {
			after, ok := strings.CutPrefix(strings.TrimSpace(text), "$ ")
			if !ok {
				continue
			}
			text = after
		}
		for strings.HasSuffix(text, `\`) && i+1 < len(lines) {
			i++
			text = strings.TrimSuffix(text, `\`) + " " + lines[i]
		}
		for _, words := range splitShell(text) {
			cmds = append(cmds, shellCommand{line: start, words: words})
		}
	}
	return cmds
}

// splitShell splits a shell line into simple commands (at |, ||, &&, ;, &,
// parentheses and $( … )), removing quotes, comments and redirections. It
// is no shell: enough for the commands documents show.
func splitShell(s string) [][]string {
	var cmds [][]string
	var words []string
	var w strings.Builder
	inWord := false
	flushWord := func() {
		if inWord {
			words = append(words, w.String())
		}
		w.Reset()
		inWord = false
	}
	flushCmd := func() {
		flushWord()
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
		words = nil
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			w.WriteString(s[i+1 : i+1+j])
			inWord, i = true, i+1+j
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				w.WriteByte(s[j])
				j++
			}
			inWord, i = true, j
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			inWord = true
		case c == '#' && !inWord:
			flushCmd()
			return cmds
		case c == '$' && i+1 < len(s) && s[i+1] == '(':
			flushCmd()
			i++
		case strings.IndexByte("|&;()", c) >= 0:
			flushCmd()
		case c == ' ' || c == '\t':
			flushWord()
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	flushCmd()
	for i, cmd := range cmds {
		cmds[i] = commandWords(cmd)
	}
	return slices.DeleteFunc(cmds, func(c []string) bool { return len(c) == 0 })
}

// redirection is a word that redirects (>file, 2>&1, <in): not an argument.
var redirection = regexp.MustCompile(`^[0-9]*[<>]`)

// assignment is a VAR=value word before a command.
var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// commandWords drops the assignments before a command (VAR=value cmd) and
// its redirections.
func commandWords(words []string) []string {
	for len(words) > 0 && assignment.MatchString(words[0]) {
		words = words[1:]
	}
	var out []string
	for i := 0; i < len(words); i++ {
		if redirection.MatchString(words[i]) {
			if strings.TrimLeft(words[i], "0123456789<>&") == "" {
				i++ // the target is the next word
			}
			continue
		}
		out = append(out, words[i])
	}
	return out
}

// imaploadArgs returns the arguments of an imapload invocation: the binary
// by any path, or `go run ./cmd/imapload`.
func imaploadArgs(words []string) ([]string, bool) {
	if len(words) == 0 {
		return nil, false
	}
	if path.Base(words[0]) == "imapload" {
		return words[1:], true
	}
	if len(words) >= 3 && words[0] == "go" && words[1] == "run" {
		for i := 2; i < len(words); i++ {
			if strings.TrimSuffix(words[i], "/") == "./cmd/imapload" {
				return words[i+1:], true
			}
			if !strings.HasPrefix(words[i], "-") {
				return nil, false
			}
		}
	}
	return nil, false
}

// checkImapload resolves an imapload command line against the cobra tree:
// the subcommand must exist and its flags parse.
func checkImapload(words []string) error {
	args, ok := imaploadArgs(words)
	if !ok {
		return nil
	}
	root := newRoot()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if cmd == root && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		return fmt.Errorf("imapload has no subcommand %q", rest[0])
	}
	if err := cmd.ParseFlags(rest); err != nil && !errors.Is(err, pflag.ErrHelp) {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	return nil
}

// taskOf returns the task a `task` command runs.
func taskOf(words []string) (string, bool) {
	if len(words) == 0 || words[0] != "task" {
		return "", false
	}
	for _, w := range words[1:] {
		if !strings.HasPrefix(w, "-") && !strings.Contains(w, "=") {
			return w, true
		}
	}
	return "", false
}

// TestDocsLinks fails on a relative link of any document that leads
// nowhere: a file that does not exist, or an #anchor that is no heading of
// its target.
func TestDocsLinks(t *testing.T) {
	for _, file := range markdownFiles(t) {
		b, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range mdLinks(string(b)) {
			if err := checkLink(file, l.target); err != nil {
				t.Errorf("%s:%d: link %q: %v", file, l.line, l.target, err)
			}
		}
	}
}

type mdLink struct {
	line   int
	target string
}

// linkPattern is a markdown link or image: [text](target) or ![alt](target).
var linkPattern = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// mdLinks lists the links of md outside code blocks and code spans.
func mdLinks(md string) []mdLink {
	var links []mdLink
	inBlock := false
	for i, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock || strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t") {
			continue
		}
		for _, m := range linkPattern.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
			links = append(links, mdLink{line: i + 1, target: m[1]})
		}
	}
	return links
}

var codeSpan = regexp.MustCompile("`[^`]*`")

// checkLink resolves target, a link in file (both relative to the
// repository); absolute URLs are not followed.
func checkLink(file, target string) error {
	if u, err := url.Parse(target); err != nil {
		return err
	} else if u.Scheme != "" {
		return nil
	}
	p, anchor, _ := strings.Cut(target, "#")
	dest := file
	if p != "" {
		dest = path.Join(path.Dir(file), p)
	}
	if strings.HasPrefix(dest, "../") {
		return fmt.Errorf("leads out of the repository")
	}
	info, err := os.Stat(filepath.Join(repoRoot, dest))
	if err != nil {
		return fmt.Errorf("no such file: %s", dest)
	}
	if anchor == "" {
		return nil
	}
	if info.IsDir() || !strings.HasSuffix(dest, ".md") {
		return fmt.Errorf("#%s: %s is no markdown document", anchor, dest)
	}
	b, err := os.ReadFile(filepath.Join(repoRoot, dest))
	if err != nil {
		return err
	}
	if !slices.Contains(anchors(string(b)), anchor) {
		return fmt.Errorf("%s has no heading for #%s", dest, anchor)
	}
	return nil
}

// anchors are the ids GitHub gives md's headings: lower case, punctuation
// but '-' and '_' removed, spaces as '-', a repeated id numbered -1, -2, ….
func anchors(md string) []string {
	var ids []string
	seen := map[string]int{}
	inBlock := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
		}
		if inBlock || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var id strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				id.WriteRune(r)
			case r == ' ':
				id.WriteByte('-')
			}
		}
		s := id.String()
		if n := seen[s]; n > 0 {
			ids = append(ids, fmt.Sprintf("%s-%d", s, n))
		} else {
			ids = append(ids, s)
		}
		seen[s]++
	}
	return ids
}

// TestDocsCommandsCatch: the checks find what they are for.
func TestDocsCommandsCatch(t *testing.T) {
	md := "```sh\n" +
		"go run ./cmd/imapload demo --step-duration 5s   # fine\n" +
		"./imapload bogus --x\n" +
		"IMAPLOAD_X=1 imapload run --imap h:1 --no-such-flag && echo\n" +
		"imapload ramp --step-duration five\n" +
		"imapload seed \\\n  --imap h:1 --mesages 10\n" +
		"task nope\n" +
		"```\n"
	var bad []string
	for _, c := range shellCommands(md) {
		if err := checkImapload(c.words); err != nil {
			bad = append(bad, fmt.Sprintf("%d %s", c.line, c.words[1]))
		}
		if name, ok := taskOf(c.words); ok && !slices.Contains(taskNames(t), name) {
			bad = append(bad, fmt.Sprintf("%d task %s", c.line, name))
		}
	}
	want := []string{"3 bogus", "4 run", "5 ramp", "6 seed", "8 task nope"}
	if !slices.Equal(bad, want) {
		t.Errorf("shell block checks found %q, want %q", bad, want)
	}
	if got := anchors("# A run: `imapload run`\n## Exit codes\n## Exit codes\n"); !slices.Equal(got, []string{"a-run-imapload-run", "exit-codes", "exit-codes-1"}) {
		t.Errorf("anchors() = %q", got)
	}
}

// readmeMaxLines keeps README.md a guide: the reference belongs in docs/.
const readmeMaxLines = 200

// TestReadmeIsAGuide fails when README.md grows past readmeMaxLines or stops
// giving the two commands a fresh machine needs: the demo and the tests.
func TestReadmeIsAGuide(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move reference into docs/", n, readmeMaxLines)
	}
	for _, want := range []string{"go run ./cmd/imapload demo", "IMAPLOAD_LONG=1 go run ./internal/e2estatus -race ./..."} {
		if !strings.Contains(string(b), want) {
			t.Errorf("README.md does not give %q", want)
		}
	}
}
