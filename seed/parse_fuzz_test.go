package seed

import (
	"errors"
	"testing"
)

// FuzzParseSizes: any --sizes text parses or fails with ErrBadSizes, never
// panics, and a table that parses draws sizes in its bounds and reads back
// from its String.
func FuzzParseSizes(f *testing.F) {
	for _, s := range []string{DefaultSizes, "4k:1", "600-1000:0.5,2m:1e3", "1k-2k:", "9999999999999999k:1", "-:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tab, err := ParseSizes(s)
		if err != nil {
			if !errors.Is(err, ErrBadSizes) {
				t.Fatalf("ParseSizes(%q) error = %v, want ErrBadSizes", s, err)
			}
			return
		}
		again, err := ParseSizes(tab.String())
		if err != nil || again.String() != tab.String() {
			t.Fatalf("ParseSizes(%q).String() = %q does not read back: %v", s, tab.String(), err)
		}
		g := &Generator{Sizes: tab}
		for i := range 8 {
			if n := g.Size(Key{Index: i}); n < MinSize || n > MaxSize {
				t.Fatalf("ParseSizes(%q): drew %d bytes", s, n)
			}
		}
	})
}

// FuzzParseFolders: any --folders text parses or fails with ErrBadFolders,
// never panics, and the targets of one that parses add up.
func FuzzParseFolders(f *testing.F) {
	for _, s := range []string{DefaultFolders, "INBOX", "INBOX,Sent=3", "a:1e308,b:1e308", "=", ":"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fs, err := ParseFolders(s)
		if err != nil {
			if !errors.Is(err, ErrBadFolders) {
				t.Fatalf("ParseFolders(%q) error = %v, want ErrBadFolders", s, err)
			}
			return
		}
		const n = 97
		shared, own := 0, 0
		for i, tg := range fs.Targets(n) {
			if tg.Count < 0 {
				t.Fatalf("ParseFolders(%q).Targets(%d): %s %d", s, n, tg.Folder, tg.Count)
			}
			if fs[i].Count < 0 {
				shared += tg.Count
			} else {
				own += tg.Count
			}
		}
		if fs.Shared() && shared != n {
			t.Fatalf("ParseFolders(%q).Targets(%d): shares add up to %d", s, n, shared)
		}
	})
}
