package producer

import (
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/emersion/go-imap/v2"
)

// accountPool leases accounts to sessions. Every producer draws from the whole
// account list, in an order shuffled from its own seed, so different
// producers log the same accounts in at the same time, as a user's phone and
// laptop do; within one producer an account has at most perAccount sessions.
// A session leases an account at each (re)connect and returns it when the
// connection ends, so sessions rotate through the pool as they log out.
type accountPool struct {
	accts      []Account
	perAccount int

	mu     sync.Mutex
	order  []int        // shuffled indexes into accts
	inUse  []int        // sessions per account, by index into accts
	cursor int          // next position in order to try
	own    [][]imap.UID // per account: messages imapload appended to its INBOX in this step, at most knownUIDs
}

func newAccountPool(accts []Account, perAccount int, seed uint64) *accountPool {
	rng := rand.New(rand.NewPCG(seed, 0x6163636f756e7473))
	return &accountPool{
		accts:      accts,
		perAccount: max(perAccount, 1),
		order:      rng.Perm(len(accts)),
		inUse:      make([]int, len(accts)),
		own:        make([][]imap.UID, len(accts)),
	}
}

// addOwn notes uid as a message imapload appended to account idx's INBOX,
// forgetting the oldest beyond knownUIDs (it stays in the INBOX). The
// account's messages are shared by its sessions: a session that appends and
// logs out leaves them to the next, so MOVE and EXPUNGE find one even when
// sessions are short.
func (p *accountPool) addOwn(idx int, uid imap.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if idx < 0 || idx >= len(p.own) {
		return
	}
	if len(p.own[idx]) >= knownUIDs {
		p.own[idx] = slices.Delete(p.own[idx], 0, 1)
	}
	p.own[idx] = append(p.own[idx], uid)
}

// hasOwn reports whether account idx holds a message of addOwn's.
func (p *accountPool) hasOwn(idx int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return idx >= 0 && idx < len(p.own) && len(p.own[idx]) > 0
}

// takeOwn removes and returns a random message of addOwn's for account
// idx, so that two sessions never MOVE or EXPUNGE the same one; ok is false
// when there is none.
func (p *accountPool) takeOwn(idx int, rng *rand.Rand) (uid imap.UID, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if idx < 0 || idx >= len(p.own) || len(p.own[idx]) == 0 {
		return 0, false
	}
	k := rng.IntN(len(p.own[idx]))
	uid = p.own[idx][k]
	p.own[idx] = slices.Delete(p.own[idx], k, k+1)
	return uid, true
}

// capacity is how many sessions the pool can serve at once.
func (p *accountPool) capacity() int { return len(p.accts) * p.perAccount }

// acquire leases the next account in the shuffled order that has a free
// session slot. ok is false when every account is at perAccount sessions.
func (p *accountPool) acquire() (idx int, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range p.order {
		i := p.order[p.cursor]
		p.cursor = (p.cursor + 1) % len(p.order)
		if p.inUse[i] < p.perAccount {
			p.inUse[i]++
			return i, true
		}
	}
	return -1, false
}

// release returns a lease taken by acquire.
func (p *accountPool) release(idx int) {
	p.mu.Lock()
	if idx >= 0 && idx < len(p.inUse) && p.inUse[idx] > 0 {
		p.inUse[idx]--
	}
	p.mu.Unlock()
}

func (p *accountPool) account(idx int) Account { return p.accts[idx] }
