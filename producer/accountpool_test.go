package producer

import (
	"fmt"
	"slices"
	"testing"
)

func poolAccounts(n int) []Account {
	accts := make([]Account, n)
	for i := range accts {
		accts[i] = Account{User: fmt.Sprintf("u%d", i), Password: "pw"}
	}
	return accts
}

func TestAccountPoolRespectsPerAccountLimit(t *testing.T) {
	tests := []struct {
		name       string
		accounts   int
		perAccount int
		wantLeases int
	}{
		{"one each", 5, 1, 5},
		{"two each", 5, 2, 10},
		{"single account", 1, 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newAccountPool(poolAccounts(tt.accounts), tt.perAccount, 1)
			per := map[int]int{}
			for range tt.wantLeases {
				i, ok := p.acquire()
				if !ok {
					t.Fatalf("accountPool.acquire() ok = false after %d leases, want %d leases", len(per), tt.wantLeases)
				}
				per[i]++
			}
			if i, ok := p.acquire(); ok {
				t.Errorf("accountPool.acquire() = %d, true beyond capacity %d", i, p.capacity())
			}
			for i, n := range per {
				if n > tt.perAccount {
					t.Errorf("account %d leased %d times, want ≤ %d", i, n, tt.perAccount)
				}
			}
			p.release(0)
			if i, ok := p.acquire(); !ok || i != 0 {
				t.Errorf("accountPool.acquire() after release(0) = %d, %v; want 0, true", i, ok)
			}
		})
	}
}

// TestAccountPoolRotates checks that a session releasing and re-acquiring
// walks the whole pool, in an order that depends on the seed.
func TestAccountPoolRotates(t *testing.T) {
	order := func(seed uint64) []int {
		p := newAccountPool(poolAccounts(20), 1, seed)
		var got []int
		for range 20 {
			i, _ := p.acquire()
			got = append(got, i)
			p.release(i)
		}
		return got
	}
	a, b := order(1), order(2)
	if s := slices.Sorted(slices.Values(a)); !slices.Equal(s, order0(20)) {
		t.Errorf("20 leases from a 20-account pool = %v, want every account once", a)
	}
	if slices.Equal(a, b) {
		t.Errorf("seeds 1 and 2 gave the same account order %v", a)
	}
	if !slices.Equal(a, order(1)) {
		t.Errorf("seed 1 gave two different orders")
	}
}

func order0(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
