package reporter

import (
	"strings"
	"unicode/utf8"
)

// textTable lays out rows of cells in fixed-width columns separated by two
// spaces. Notes are lines of free text under a row, indented, that do not
// widen the columns: on a page of limited width they are folded instead.
type textTable struct {
	header []string
	left   map[int]bool // columns aligned left; the others align right
	lines  []tableLine
}

type tableLine struct {
	cells []string
	note  string
}

// Indents of a note under a row, and of the lines it folds onto.
const (
	noteIndent = "      "
	noteHang   = "        "
)

func (t *textTable) row(cells []string) { t.lines = append(t.lines, tableLine{cells: cells}) }

func (t *textTable) note(s string) { t.lines = append(t.lines, tableLine{note: s}) }

func (t *textTable) widths() []int {
	w := make([]int, len(t.header))
	for i, h := range t.header {
		w[i] = utf8.RuneCountInString(h)
	}
	for _, l := range t.lines {
		for i, c := range l.cells {
			w[i] = max(w[i], utf8.RuneCountInString(c))
		}
	}
	return w
}

func (t *textTable) write(p *page) {
	w := t.widths()
	t.writeCells(p, w, t.header)
	for _, l := range t.lines {
		if l.cells == nil {
			p.para(noteIndent, noteHang, l.note)
			continue
		}
		t.writeCells(p, w, l.cells)
	}
}

func (t *textTable) writeCells(p *page, w []int, cells []string) {
	var line strings.Builder
	for i, c := range cells {
		pad := strings.Repeat(" ", w[i]-utf8.RuneCountInString(c))
		if i > 0 {
			line.WriteString("  ")
		}
		if t.left[i] {
			line.WriteString(c + pad)
		} else {
			line.WriteString(pad + c)
		}
	}
	p.WriteString(strings.TrimRight(line.String(), " ") + "\n")
}

// page is the text of a table and its summary as it is written: paragraphs
// are folded to width columns (0: never folded, one line each), and told
// keeps the remedies printed so far.
type page struct {
	strings.Builder
	width int
	told  told
}

// para writes text after first, folded at spaces so that no line is wider
// than the page, each further line after rest. A word too long for a line
// of its own is cut where the line ends.
func (p *page) para(first, rest, text string) {
	for _, l := range fold(first, rest, text, p.width) {
		p.WriteString(l + "\n")
	}
}

// fold returns first+text as lines of at most width runes (all of it on one
// line when width is 0), each line after the first starting with rest.
func fold(first, rest, text string, width int) []string {
	if width <= 0 {
		return []string{first + text}
	}
	var lines []string
	line, n := first, utf8.RuneCountInString(first)
	fresh := true // nothing written after the line's prefix yet
	for _, word := range strings.Fields(text) {
		wn := utf8.RuneCountInString(word)
		if !fresh && n+1+wn > width {
			lines = append(lines, line)
			line, n, fresh = rest, utf8.RuneCountInString(rest), true
		}
		if !fresh {
			line, n = line+" ", n+1
		}
		for n+wn > width && n < width { // a word longer than a whole line
			cut := []rune(word)[:width-n]
			lines = append(lines, line+string(cut))
			word = string([]rune(word)[len(cut):])
			wn -= len(cut)
			line, n = rest, utf8.RuneCountInString(rest)
		}
		line, n, fresh = line+word, n+wn, false
	}
	return append(lines, line)
}
