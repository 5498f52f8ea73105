package mailgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// DefaultSizes is the default size table: most messages a few KB, a heavy
// tail of attachments up to 8 MiB.
const DefaultSizes = "2k-8k:70,8k-64k:20,64k-1m:8,1m-8m:2"

// Limits of a size table.
const (
	MinSize   = 512      // bytes: the smallest message a range may ask for
	MaxSize   = 64 << 20 // bytes: the largest
	maxRanges = 64
	maxWeight = 1e6 // of a range or a folder's share, so that their sum stays finite
)

// SizeRange is one row of a size table: messages of Min to Max bytes
// (inclusive), drawn with relative Weight.
type SizeRange struct {
	Min, Max int     // bytes
	Weight   float64 // relative, > 0
}

// Sizes is a weighted table of size ranges. A message's size is drawn in
// two steps: a range with probability weight/total, then a size in it,
// log-uniform (as many between 2 and 4 KiB as between 4 and 8 KiB), so that
// small sizes are common within a range as they are in real mail.
type Sizes struct {
	Ranges []SizeRange
	total  float64
}

// ParseSizes parses a table such as "2k-8k:70,8k-64k:20,1m-8m:2": ranges
// of sizes with a suffix k (KiB) or m (MiB) or none (bytes), each with a
// weight. A range may be one size ("4k:10"). It does no I/O.
func ParseSizes(s string) (Sizes, error) {
	var t Sizes
	for i, item := range strings.Split(s, ",") {
		r, err := parseSizeRange(strings.TrimSpace(item))
		if err != nil {
			return Sizes{}, fmt.Errorf("%w: %q: item %d %q: %v", ErrBadSizes, s, i+1, item, err)
		}
		t.Ranges = append(t.Ranges, r)
		t.total += r.Weight
	}
	if len(t.Ranges) > maxRanges {
		return Sizes{}, fmt.Errorf("%w: %q: more than %d ranges", ErrBadSizes, s, maxRanges)
	}
	return t, nil
}

func parseSizeRange(item string) (SizeRange, error) {
	span, w, ok := strings.Cut(item, ":")
	if !ok {
		return SizeRange{}, fmt.Errorf(`want MIN-MAX:WEIGHT, e.g. "2k-8k:70"`)
	}
	weight, err := strconv.ParseFloat(strings.TrimSpace(w), 64)
	if err != nil || !(weight > 0 && weight <= maxWeight) {
		return SizeRange{}, fmt.Errorf("weight %q: want a number > 0 and ≤ %g", w, float64(maxWeight))
	}
	lo, hi, found := strings.Cut(span, "-")
	if !found {
		hi = lo
	}
	var r SizeRange
	if r.Min, err = parseSize(lo); err == nil {
		r.Max, err = parseSize(hi)
	}
	switch {
	case err != nil:
		return SizeRange{}, err
	case r.Min > r.Max:
		return SizeRange{}, fmt.Errorf("%s > %s", FormatSize(r.Min), FormatSize(r.Max))
	}
	r.Weight = weight
	return r, nil
}

// parseSize parses "512", "8k" or "2m" (KiB and MiB) within MinSize–MaxSize.
func parseSize(s string) (int, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	unit := 1
	switch {
	case strings.HasSuffix(s, "k"):
		unit, s = 1<<10, strings.TrimSuffix(s, "k")
	case strings.HasSuffix(s, "m"):
		unit, s = 1<<20, strings.TrimSuffix(s, "m")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > MaxSize/unit || n*unit < MinSize {
		return 0, fmt.Errorf("size %q: want %d to %s bytes, with k or m for KiB or MiB", s, MinSize, FormatSize(MaxSize))
	}
	return n * unit, nil
}

// FormatSize writes n bytes the way ParseSizes reads them: "8k", "2m", or
// bytes when n is not a whole number of KiB.
func FormatSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "m"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "k"
	}
	return strconv.Itoa(n)
}

// Draw returns a size drawn from the table with r.
func (t Sizes) Draw(r *rand.Rand) int {
	x := r.Float64() * t.total
	i := 0
	for ; i < len(t.Ranges)-1 && x >= t.Ranges[i].Weight; i++ {
		x -= t.Ranges[i].Weight
	}
	g := t.Ranges[i]
	if g.Min == g.Max {
		return g.Min
	}
	lo, hi := math.Log(float64(g.Min)), math.Log(float64(g.Max))
	return min(g.Max, int(math.Exp(lo+r.Float64()*(hi-lo))))
}

// Mean returns the mean size of the table in bytes.
func (t Sizes) Mean() float64 {
	var m float64
	for _, g := range t.Ranges {
		m += g.Weight / t.total * g.mean()
	}
	return m
}

// mean is a log-uniform range's mean, (max-min)/ln(max/min).
func (g SizeRange) mean() float64 {
	if g.Min == g.Max {
		return float64(g.Min)
	}
	return float64(g.Max-g.Min) / math.Log(float64(g.Max)/float64(g.Min))
}

// span writes the range as ParseSizes reads it: "2k-8k", or "4k" alone.
func (g SizeRange) span() string {
	if g.Min == g.Max {
		return FormatSize(g.Min)
	}
	return FormatSize(g.Min) + "-" + FormatSize(g.Max)
}

// Share returns range i's share of the messages, in [0, 1].
func (t Sizes) Share(i int) float64 { return t.Ranges[i].Weight / t.total }

// String writes the table as ParseSizes reads it.
func (t Sizes) String() string {
	parts := make([]string, len(t.Ranges))
	for i, g := range t.Ranges {
		parts[i] = g.span() + ":" + strconv.FormatFloat(g.Weight, 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}

// Describe states the table for people: each range's share, and the mean
// size, e.g. "2k-8k 70%, 1m-8m 2% (log-uniform within a range; mean 96 KiB)".
func (t Sizes) Describe() string {
	parts := make([]string, len(t.Ranges))
	for i, g := range t.Ranges {
		parts[i] = fmt.Sprintf("%s %.4g%%", g.span(), 100*t.Share(i))
	}
	return fmt.Sprintf("%s (log-uniform within a range; mean %.0f KiB; %s and larger carry a base64 attachment)",
		strings.Join(parts, ", "), t.Mean()/1024, FormatSize(AttachmentFrom))
}
