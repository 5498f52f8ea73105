package seed

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// DefaultFolders is the default folder list: shares of each account's
// messages.
const DefaultFolders = "INBOX:70,Archive:20,Sent:10"

const maxFolders = 100

// Folder is one folder to fill: either a Share of the messages per account
// or a Count of its own.
type Folder struct {
	Name  string  // the mailbox name, e.g. "INBOX" or "Archive/2024"
	Share float64 // relative share of Options.Messages; 0 when Count is set
	Count int     // messages of its own, outside the shares; -1 when Share is set
}

// Folders is the list of folders to fill, in order.
type Folders []Folder

// ParseFolders parses a list such as "INBOX:70,Archive:20,Sent:10" (shares
// of the messages per account), "INBOX,Archive" (equal shares) or
// "INBOX,Sent=200" (Sent holds 200 messages of its own; INBOX has the
// messages per account). It does no I/O.
func ParseFolders(s string) (Folders, error) {
	var fs Folders
	for item := range strings.SplitSeq(s, ",") {
		f, err := parseFolder(strings.TrimSpace(item))
		switch {
		case err != nil:
			return nil, fmt.Errorf("%w: %q: %v", ErrBadFolders, s, err)
		case slices.ContainsFunc(fs, func(g Folder) bool { return strings.EqualFold(g.Name, f.Name) }):
			return nil, fmt.Errorf("%w: %q: folder %q listed twice", ErrBadFolders, s, f.Name)
		}
		fs = append(fs, f)
	}
	if len(fs) > maxFolders {
		return nil, fmt.Errorf("%w: %q: more than %d folders", ErrBadFolders, s, maxFolders)
	}
	return fs, nil
}

func parseFolder(item string) (Folder, error) {
	if name, count, ok := strings.Cut(item, "="); ok {
		n, err := strconv.Atoi(strings.TrimSpace(count))
		if err != nil || n < 0 {
			return Folder{}, fmt.Errorf("%q: want NAME=COUNT with a count ≥ 0", item)
		}
		return Folder{Name: strings.TrimSpace(name), Count: n}, checkFolderName(name)
	}
	name, share, ok := strings.Cut(item, ":")
	w := 1.0
	if ok {
		var err error
		if w, err = strconv.ParseFloat(strings.TrimSpace(share), 64); err != nil || !(w > 0 && w <= maxWeight) {
			return Folder{}, fmt.Errorf("%q: want NAME:SHARE with a share > 0 and ≤ %g", item, float64(maxWeight))
		}
	}
	return Folder{Name: strings.TrimSpace(name), Share: w, Count: -1}, checkFolderName(name)
}

func checkFolderName(name string) error {
	name = strings.TrimSpace(name)
	if name == "" || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '*' || r == '%' }) {
		return fmt.Errorf("folder name %q: want a non-empty name without control characters, '*' or '%%'", name)
	}
	return nil
}

// Target is the number of messages one folder of an account should hold.
type Target struct {
	Folder string
	Count  int
}

// Targets splits messages (per account) over the folders with shares, by
// largest remainder so that they add up to messages, and adds the folders
// with counts of their own.
func (fs Folders) Targets(messages int) []Target {
	var total float64
	for _, f := range fs {
		total += f.Share
	}
	ts := make([]Target, len(fs))
	rems := make([]float64, len(fs))
	left := messages
	for i, f := range fs {
		ts[i] = Target{Folder: f.Name, Count: f.Count}
		if f.Count < 0 {
			exact := float64(messages) * f.Share / total
			ts[i].Count = int(exact)
			rems[i], left = exact-float64(ts[i].Count), left-ts[i].Count
		}
	}
	for ; left > 0; left-- {
		best := -1
		for j := range fs {
			if fs[j].Count < 0 && (best < 0 || rems[j] > rems[best]) {
				best = j
			}
		}
		if best < 0 {
			break
		}
		ts[best].Count++
		rems[best] = -1
	}
	return ts
}

// Shared reports whether any folder takes a share of the messages.
func (fs Folders) Shared() bool {
	return slices.ContainsFunc(fs, func(f Folder) bool { return f.Count < 0 })
}
