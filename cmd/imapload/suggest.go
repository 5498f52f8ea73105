package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// "Did you mean" for the names a user types: flags (a typo is refused by
// cobra, which does not say what was meant) and environment variables (a
// typo would be ignored in silence: see unknownEnv).

// suggestFlag adds the nearest flags of cmd to cobra's unknown-flag error.
func suggestFlag(cmd *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	if near := closest(name, flagNames(cmd.Flags(), cmd.InheritedFlags())); len(near) > 0 {
		return fmt.Errorf("%w; did you mean --%s?", err, strings.Join(near, " or --"))
	}
	return fmt.Errorf("%w (see imapload %s --help)", err, cmd.Name())
}

// flagNames are the names of the flags of the sets, without repeats.
func flagNames(sets ...*pflag.FlagSet) []string {
	var names []string
	for _, fs := range sets {
		fs.VisitAll(func(f *pflag.Flag) {
			if !slices.Contains(names, f.Name) {
				names = append(names, f.Name)
			}
		})
	}
	return names
}

// closest returns the candidates nearest to name (at most maxSuggestions,
// sorted) if they are near enough to be a typo of it: at most 2 edits, or a
// third of name's length for a long name; none otherwise. The prefix
// IMAPLOAD_, shared by every variable, does not count in the length.
func closest(name string, candidates []string) []string {
	limit := max(2, len(strings.TrimPrefix(name, "IMAPLOAD_"))/3)
	best, near := limit+1, []string(nil)
	for _, c := range candidates {
		switch d := editDistance(name, c); {
		case d > limit:
		case d < best:
			best, near = d, []string{c}
		case d == best:
			near = append(near, c)
		}
	}
	slices.Sort(near)
	return near[:min(len(near), maxSuggestions)]
}

// maxSuggestions bounds the names one "did you mean" offers.
const maxSuggestions = 3

// editDistance is the Levenshtein distance of a and b: the fewest
// insertions, deletions and substitutions of bytes that turn a into b.
func editDistance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
