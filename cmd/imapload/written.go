package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// printWritten says where a command wrote its files: "report files in
// /abs/dir:" and the names on the next line ("report.json, report.csv, …"),
// the folder made absolute so that it can be opened from anywhere. It
// prints nothing when no file was written (the command's error says why).
func printWritten(out io.Writer, what, dir string, paths []string) {
	if len(paths) == 0 {
		return
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = filepath.Base(p)
	}
	fmt.Fprintf(out, "\n%s in %s:\n  %s\n", what, dir, strings.Join(names, ", "))
}
