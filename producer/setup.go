package producer

import (
	"slices"
	"sync"

	"github.com/imapload/imapload/messages"
)

// setupTrack counts one step's session set-ups stage by stage (see
// messages.SetupStage) until its measurement window ends, when it keeps
// what it counted for the final batch. A set-up that the step itself
// stopped (its context ended) is uncounted: imapload ended it, not the
// server.
type setupTrack struct {
	mu     sync.Mutex
	ended  bool
	stages [numSetupStages]stageCount
	final  messages.SetupList
}

// stageCount is one stage's counts, and its failures by kind.
type stageCount struct {
	started, failed, inFlight uint64
	kinds                     map[string]uint64
}

// The set-up stages, by index into setupTrack.stages.
const (
	stageConnect = iota
	stageTLS
	stageGreeting
	stageLogin
	stageSelect
	numSetupStages
)

// begin counts an attempt of stage started.
func (t *setupTrack) begin(stage int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.ended {
		t.stages[stage].started++
		t.stages[stage].inFlight++
	}
}

// end counts the attempt's outcome: passed when kind is "", else failed
// with that normalized error kind.
func (t *setupTrack) end(stage int, kind string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return
	}
	c := &t.stages[stage]
	c.inFlight--
	if kind == "" {
		return
	}
	c.failed++
	if c.kinds == nil {
		c.kinds = map[string]uint64{}
	}
	if len(c.kinds) < messages.MaxErrorKinds || c.kinds[kind] > 0 {
		c.kinds[kind]++
	}
}

// cancel uncounts an attempt the step stopped.
func (t *setupTrack) cancel(stage int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.ended {
		t.stages[stage].started--
		t.stages[stage].inFlight--
	}
}

// endWindow keeps the counts as they stand when the window ends: what is
// in flight then is waiting. Later calls change nothing.
func (t *setupTrack) endWindow() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return
	}
	t.ended = true
	names := messages.SetupStages()
	for i, c := range t.stages {
		if c.started == 0 {
			continue
		}
		s := messages.SetupStage{Stage: names[i], Started: c.started, Failed: c.failed, Waiting: c.inFlight}
		s.Error, s.ErrorCount = topKind(c.kinds)
		t.final = append(t.final, s)
	}
}

// result is what endWindow kept; nil before it ran.
func (t *setupTrack) result() messages.SetupList {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.final)
}

// topKind is the most frequent kind (the first by name on a tie).
func topKind(kinds map[string]uint64) (string, uint64) {
	var top string
	var n uint64
	for k, c := range kinds {
		if c > n || c == n && k < top {
			top, n = k, c
		}
	}
	return top, n
}
