package mailgen

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestParseSizes(t *testing.T) {
	tests := []struct {
		name, in, want string
		err            error
	}{
		{name: "default", in: DefaultSizes, want: DefaultSizes},
		{name: "bytes and one size", in: "600-1000:1, 4k:3", want: "600-1000:1,4k:3"},
		{name: "upper case units", in: "2K-1M:5", want: "2k-1m:5"},
		{name: "no weight", in: "2k-8k", err: ErrBadSizes},
		{name: "zero weight", in: "2k-8k:0", err: ErrBadSizes},
		{name: "negative weight", in: "2k-8k:-1", err: ErrBadSizes},
		{name: "NaN weight", in: "2k-8k:NaN", err: ErrBadSizes},
		{name: "reversed", in: "8k-2k:1", err: ErrBadSizes},
		{name: "too small", in: "100-2k:1", err: ErrBadSizes},
		{name: "too large", in: "1m-65m:1", err: ErrBadSizes},
		{name: "overflowing", in: "1k-99999999999999m:1", err: ErrBadSizes},
		{name: "bad unit", in: "2g:1", err: ErrBadSizes},
		{name: "empty", in: "", err: ErrBadSizes},
		{name: "empty item", in: "2k:1,", err: ErrBadSizes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSizes(tt.in)
			if !errors.Is(err, tt.err) {
				t.Fatalf("ParseSizes(%q) error = %v, want %v", tt.in, err, tt.err)
			}
			if err == nil && got.String() != tt.want {
				t.Errorf("ParseSizes(%q).String() = %q, want %q", tt.in, got.String(), tt.want)
			}
		})
	}
}

// TestSizesDraw: with a fixed seed, the drawn sizes fall in the ranges with
// the table's shares (within 1.5 points over 20,000 draws) and in bounds.
func TestSizesDraw(t *testing.T) {
	tab, err := ParseSizes(DefaultSizes)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 7))
	const n = 20_000
	counts := make([]int, len(tab.Ranges))
	for range n {
		size := tab.Draw(r)
		counts[rangeOf(t, tab, size)]++
	}
	for i, c := range counts {
		got, want := float64(c)/n, tab.Share(i)
		if math.Abs(got-want) > 0.015 {
			t.Errorf("range %d (%s-%s): share %.3f, want %.3f", i, FormatSize(tab.Ranges[i].Min), FormatSize(tab.Ranges[i].Max), got, want)
		}
	}
}

func rangeOf(t *testing.T, tab Sizes, size int) int {
	t.Helper()
	for i, g := range tab.Ranges {
		if size >= g.Min && size <= g.Max {
			return i
		}
	}
	t.Fatalf("size %d is in no range of %s", size, tab)
	return -1
}

// TestSizesMean: the stated mean is the mean of the draws (within 3%).
func TestSizesMean(t *testing.T) {
	tab, err := ParseSizes("2k-8k:70,8k-64k:30")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var sum float64
	const n = 50_000
	for range n {
		sum += float64(tab.Draw(r))
	}
	if got, want := sum/n, tab.Mean(); math.Abs(got-want)/want > 0.03 {
		t.Errorf("mean of draws = %.0f, Mean() = %.0f", got, want)
	}
}

func TestSizesDescribe(t *testing.T) {
	tab, _ := ParseSizes(DefaultSizes)
	want := "2k-8k 70%, 8k-64k 20%, 64k-1m 8%, 1m-8m 2% (log-uniform within a range; mean 105 KiB; 32k and larger carry a base64 attachment)"
	if got := tab.Describe(); got != want {
		t.Errorf("Describe() = %q\nwant %q", got, want)
	}
}
