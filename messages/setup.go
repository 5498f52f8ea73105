package messages

import (
	"fmt"
	"slices"

	"github.com/imapload/imapload/messages/internal/wire"
	"github.com/vmihailenco/msgpack/v5"
)

// The stages of a session's set-up, in the order a session passes them
// (RFC 9051 §3: not authenticated, authenticated, selected): the TCP
// connect, the TLS handshake (implicit TLS or STARTTLS), the server's
// greeting (§7.1.1), LOGIN or AUTHENTICATE (§6.2), SELECT INBOX (§6.3.2).
// No scheduled command is sent on a session before it has passed them all.
const (
	SetupConnect  = "connect"
	SetupTLS      = "tls"
	SetupGreeting = "greeting"
	SetupLogin    = "login"
	SetupSelect   = "select"
)

// SetupStages lists the set-up stages in session order.
func SetupStages() []string {
	return []string{SetupConnect, SetupTLS, SetupGreeting, SetupLogin, SetupSelect}
}

// SetupStage counts one set-up stage of the sessions that serve a step's
// scheduled commands (not held IDLE connections, which count their own),
// from the step's start, warm-up included, to the end of its measurement
// window: the set-ups a step's commands waited on. A producer sends them in
// its final batch only.
type SetupStage struct {
	// Stage is one of SetupStages.
	Stage string `msgpack:"stage" json:"stage"`
	// Started counts the attempts of this stage begun before the window
	// ended.
	Started uint64 `msgpack:"started" json:"started"`
	// Failed counts those of Started that failed before the window ended
	// (refused, broken, timed out), errors imapload caused itself left out.
	Failed uint64 `msgpack:"failed" json:"failed"`
	// Waiting counts those of Started still unanswered when the window
	// ended: the server had not answered them yet.
	Waiting uint64 `msgpack:"waiting" json:"waiting"`
	// Error is the most frequent normalized error kind of Failed, "" when
	// none failed; ErrorCount is how many failed with it.
	Error      string `msgpack:"error,omitempty" json:"error,omitempty"`
	ErrorCount uint64 `msgpack:"error_count,omitempty" json:"error_count,omitempty"`
}

// Done counts the attempts that passed the stage before the window ended.
func (s SetupStage) Done() uint64 {
	return s.Started - min(s.Failed+s.Waiting, s.Started)
}

// SetupList is a batch's set-up stages with a bounded decoder.
type SetupList []SetupStage

// DecodeMsgpack decodes at most one entry per set-up stage.
func (l *SetupList) DecodeMsgpack(d *msgpack.Decoder) error {
	n, err := wire.ArrayLen(d, "setup", len(SetupStages()))
	if err != nil || n < 0 {
		*l = nil
		return err
	}
	s := make(SetupList, n)
	for i := range s {
		if err := d.Decode(&s[i]); err != nil {
			return err
		}
	}
	*l = s
	return nil
}

// validateSetup range-checks set-up stages, of a batch or a result.
func validateSetup(stages []SetupStage, bad func(string, ...any)) {
	seen := map[string]bool{}
	for _, s := range stages {
		switch {
		case !slices.Contains(SetupStages(), s.Stage):
			bad("setup: stage %.40q, want one of %v", s.Stage, SetupStages())
		case seen[s.Stage]:
			bad("setup: stage %s listed twice", s.Stage)
		case wrapped(s.Started, s.Failed, s.Waiting, s.ErrorCount) || s.Failed+s.Waiting > s.Started || s.ErrorCount > s.Failed:
			bad("setup %s: started %d, failed %d, waiting %d, error count %d out of range", s.Stage, s.Started, s.Failed, s.Waiting, s.ErrorCount)
		case len(s.Error) > MaxKindBytes || (s.Error == "") != (s.ErrorCount == 0):
			bad("setup %s: error kind %.40q with count %d", s.Stage, s.Error, s.ErrorCount)
		}
		seen[s.Stage] = true
	}
}

// setupError is the first problem of stages, nil when there is none.
func setupError(stages []SetupStage) error {
	var err error
	validateSetup(stages, func(format string, a ...any) {
		if err == nil {
			err = fmt.Errorf(format, a...)
		}
	})
	return err
}
