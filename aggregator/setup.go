package aggregator

import "github.com/imapload/imapload/messages"

// setupSums pool the producers' set-up stages (messages.SetupStage): the
// counts add up; the error named is the kind most frequent at any one
// producer, summed where producers name the same kind.
type setupSums struct {
	stages map[string]*messages.SetupStage
	kinds  map[string]map[string]uint64 // stage → kind → count
}

func (s *setupSums) add(l messages.SetupList) {
	for _, st := range l {
		if s.stages == nil {
			s.stages, s.kinds = map[string]*messages.SetupStage{}, map[string]map[string]uint64{}
		}
		sum := s.stages[st.Stage]
		if sum == nil {
			sum = &messages.SetupStage{Stage: st.Stage}
			s.stages[st.Stage], s.kinds[st.Stage] = sum, map[string]uint64{}
		}
		sum.Started += st.Started
		sum.Failed += st.Failed
		sum.Waiting += st.Waiting
		if st.Error != "" {
			s.kinds[st.Stage][st.Error] += st.ErrorCount
		}
	}
}

// result lists the pooled stages in session order; nil when none.
func (s *setupSums) result() []messages.SetupStage {
	var out []messages.SetupStage
	for _, name := range messages.SetupStages() {
		sum := s.stages[name]
		if sum == nil {
			continue
		}
		st := *sum
		for k, n := range s.kinds[name] {
			if n > st.ErrorCount || n == st.ErrorCount && k < st.Error {
				st.Error, st.ErrorCount = k, n
			}
		}
		out = append(out, st)
	}
	return out
}
