package seed

import (
	"fmt"

	"github.com/imapload/imapload/internal/mailgen"
)

// The size table lives in internal/mailgen, shared with the producer's
// deliveries; seed names it as before.

// DefaultSizes is the default size table: most messages a few KB, a heavy
// tail of attachments up to 8 MiB.
const DefaultSizes = mailgen.DefaultSizes

// Limits of a size table (see mailgen).
const (
	MinSize   = mailgen.MinSize
	MaxSize   = mailgen.MaxSize
	maxWeight = mailgen.MaxWeight
)

// Sizes is a weighted table of size ranges (see mailgen.Sizes).
type Sizes = mailgen.Sizes

// SizeRange is one row of a size table.
type SizeRange = mailgen.SizeRange

// ParseSizes parses a table such as "2k-8k:70,8k-64k:20,1m-8m:2" (see
// mailgen.ParseSizes); its errors wrap ErrBadSizes. It does no I/O.
func ParseSizes(s string) (Sizes, error) {
	t, err := mailgen.ParseSizes(s)
	if err != nil {
		return t, fmt.Errorf("seed: %w", err)
	}
	return t, nil
}

// FormatSize writes n bytes as a size table does ("4k", "1m", "600").
func FormatSize(n int) string { return mailgen.FormatSize(n) }
