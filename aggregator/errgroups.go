package aggregator

import (
	"sort"

	"github.com/imapload/imapload/messages"
)

// errKey groups failures by phase and normalized kind.
type errKey struct {
	phase messages.Phase
	kind  string
}

// errAcc sums one error group. The example kept is the one from the first
// batch in (producer, seq) order, so it does not depend on arrival order.
type errAcc struct {
	count     uint64
	example   string
	from      batchKey
	producers map[string]struct{}
}

func (p *Pool) addError(k batchKey, ph messages.Phase, e messages.ErrorCount) {
	ek := errKey{ph, e.Kind}
	a := p.errs[ek]
	if a == nil {
		a = &errAcc{example: e.Example, from: k, producers: map[string]struct{}{}}
		p.errs[ek] = a
	}
	a.count += e.Count
	a.producers[k.producer] = struct{}{}
	if k.less(a.from) {
		a.example, a.from = e.Example, k
	}
}

// errorGroups lists the error groups, most frequent first, then by phase
// and kind.
func (p *Pool) errorGroups() []messages.ErrorGroup {
	out := make([]messages.ErrorGroup, 0, len(p.errs))
	for k, a := range p.errs {
		out = append(out, messages.ErrorGroup{
			Phase: k.phase.String(), Kind: k.kind, Count: a.count,
			Example: a.example, Producers: len(a.producers),
		})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		if a.Phase != b.Phase {
			return a.Phase < b.Phase
		}
		return a.Kind < b.Kind
	})
	return out
}
