package seed

import (
	"cmp"
	"slices"
)

// maxExamples is how many users an ErrorGroup names.
const maxExamples = 3

// ErrorGroup is one error and the accounts that failed with it: a wrong
// password or an unreachable server is one line, not one per account.
type ErrorGroup struct {
	Err      string   // the error, without the account
	Accounts int      // how many failed with it
	Examples []string // the first few users
}

// errorGroups collects failed accounts by error text.
type errorGroups map[string]*ErrorGroup

func (g *errorGroups) add(user string, err error) {
	if *g == nil {
		*g = errorGroups{}
	}
	e := (*g)[err.Error()]
	if e == nil {
		e = &ErrorGroup{Err: err.Error()}
		(*g)[e.Err] = e
	}
	e.Accounts++
	if len(e.Examples) < maxExamples {
		e.Examples = append(e.Examples, user)
	}
}

// sorted returns the groups, the most accounts first.
func (g errorGroups) sorted() []ErrorGroup {
	out := make([]ErrorGroup, 0, len(g))
	for _, e := range g {
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b ErrorGroup) int {
		return cmp.Or(cmp.Compare(b.Accounts, a.Accounts), cmp.Compare(a.Err, b.Err))
	})
	return out
}
