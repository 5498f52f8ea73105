package reporter

import (
	"strings"
	"unicode/utf8"
)

// textTable lays out rows of cells in fixed-width columns separated by two
// spaces. Notes are lines of free text under a row, indented, that do not
// widen the columns.
type textTable struct {
	header []string
	left   map[int]bool // columns aligned left; the others align right
	lines  []tableLine
}

type tableLine struct {
	cells []string
	note  string
}

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

func (t *textTable) write(b *strings.Builder) {
	w := t.widths()
	t.writeCells(b, w, t.header)
	for _, l := range t.lines {
		if l.cells == nil {
			b.WriteString("      " + l.note + "\n")
			continue
		}
		t.writeCells(b, w, l.cells)
	}
}

func (t *textTable) writeCells(b *strings.Builder, w []int, cells []string) {
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
	b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
}
